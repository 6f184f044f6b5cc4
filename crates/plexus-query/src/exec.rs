//! The row pipeline: each clause turns the rows before it into the rows
//! after it, reading and writing through the query's transaction.

use crate::error::QueryError;
use crate::eval::{eval, Ctx, Row};
mod count_distinct;
mod count_property;
mod group_count;
pub(crate) use count_distinct::shape as count_distinct_shape;
pub(crate) use count_property::shape as count_property_shape;
pub(crate) use group_count::{shape as group_count_shape, Shape as GroupShape};
mod join;
mod live;
mod pipeline;

pub(crate) use join::planned as join_planned;
pub(crate) use pipeline::{distinct_clauses, streamable};
mod row_set;

use row_set::dedupe;
pub(crate) use row_set::RowSet;

use crate::builtin;
use crate::limits::{row_size, Guard};
use crate::mutate::{self, Env, Params};
use crate::pattern;
use crate::procedure::{self, Procedures};
use crate::project::{has_aggregate, project};
use plexus_common::Value;
use plexus_cypher::{Clause, Expr, ExprKind, PathPattern, Query, SingleQuery, Statement};
use plexus_storage::{GraphRead, WriteTxn};
use std::borrow::Cow;
use std::time::Instant;

/// Where a streamed result goes: the columns once, before the first row,
/// then each row (entities filled in) as it is produced. An error from the
/// sink (say, its reader went away) stops the query.
pub trait RowSink {
    fn columns(&mut self, columns: &[String]) -> Result<(), QueryError>;
    fn row(&mut self, row: Vec<Value>) -> Result<(), QueryError>;
}

/// A query's result: column names and rows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

/// A statement's result with its plan apart ([`Prepared::run_read_planned`]):
/// an EXPLAIN's rows are none and its plan the steps; a PROFILE's rows
/// are the query's own and its plan the steps with what each did; any
/// other statement has no plan.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Planned {
    pub rows: Table,
    pub plan: Option<QueryPlan>,
}

/// The plan of an EXPLAIN or a PROFILE, as the table of its steps that the
/// statement gives as rows by default (`step`, `operator`, `details`,
/// `estimated_rows`, and under PROFILE `rows`, `time_ms`, `self_ms`).
#[derive(Debug, Clone, PartialEq)]
pub struct QueryPlan {
    pub profiled: bool,
    pub steps: Table,
}

impl Table {
    /// The table of a projection's output rows: each row's values in the
    /// order of `columns` (null where a row lacks one).
    pub(crate) fn of_rows(columns: Vec<String>, rows: Vec<Row>) -> Table {
        let rows = rows
            .into_iter()
            .map(|mut r| {
                columns
                    .iter()
                    .map(|c| r.remove(c).unwrap_or(Value::Null))
                    .collect()
            })
            .collect();
        Table { columns, rows }
    }
}

/// What a query may touch.
enum Access<'t> {
    /// No graph: MATCH finds nothing, writes are refused.
    None,
    Read(&'t dyn GraphRead),
    Write(&'t mut WriteTxn),
}

/// A parsed and checked statement, ready to run any number of times with
/// different parameters: the unit a plan cache keeps.
#[derive(Debug, Clone)]
pub struct Prepared {
    statement: Statement,
    /// The text, to place run-time errors in (line and column).
    text: Box<str>,
    writes: bool,
    /// A top-level `CALL { … } IN TRANSACTIONS`: only for auto-commit.
    batched: bool,
    /// (part, clause) of each top-level `UNWIND list AS x` after which
    /// nothing reads `list`: found once here, not at every run.
    movable: Vec<(usize, usize)>,
    /// Per top-level part that is a plain `MATCH … RETURN count(*)`, its
    /// patterns with the names of the last hops dropped when nothing reads
    /// them ([`anonymise_ends`]): copied once here, not at every run.
    counted: Vec<Option<Vec<PathPattern>>>,
    /// Per top-level part, which of its clauses the pipeline asks for each
    /// distinct row once (`pipeline::distinct_clauses`): decided once
    /// here, not at every run (it was 7% of a `RETURN 1`).
    distinct: Vec<Vec<bool>>,
    /// A SHOW's `YIELD … WHERE … RETURN …` as a query over the listed rows
    /// (`show.rs`), checked here like any query.
    listing: Option<Query>,
    /// The parameters the text names, with the offset of each one's first
    /// use: every run but an EXPLAIN's checks that it was given them all.
    needs: Vec<(String, usize)>,
}

/// How a query runs: for its rows, for its plan, or both.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Run,
    Explain,
    Profile,
}

/// Rewrites `q` (`rewrite.rs`) and checks it (`binder.rs`), giving a final
/// `RETURN *` its columns; an error is placed in `text`.
fn checked(q: &mut Query, text: &str) -> Result<(), QueryError> {
    crate::rewrite::rewrite(q);
    let columns = crate::binder::check(q).map_err(|e| e.located(text))?;
    crate::binder::star_scope(q, &columns);
    Ok(())
}

impl Prepared {
    /// Parses and checks a statement; syntax and semantic errors come here,
    /// before any row.
    pub fn new(text: &str) -> Result<Prepared, QueryError> {
        let mut statement = plexus_cypher::parse_statement(text)?;
        if let Statement::Query(q) | Statement::Profile(q) | Statement::Explain(q) = &mut statement
        {
            checked(q, text)?;
        }
        let listing = match &statement {
            Statement::Show {
                what,
                tail: Some(tail),
            } => {
                let mut q = crate::show::query(*what, tail);
                checked(&mut q, text)?;
                Some(q)
            }
            _ => None,
        };
        let writes = match &statement {
            Statement::Query(q) | Statement::Profile(q) => {
                let w = q.parts().any(|p| p.clauses.iter().any(writes));
                crate::as_of::check(q, w)?;
                w
            }
            Statement::Explain(q) => {
                crate::as_of::check(q, q.parts().any(|p| p.clauses.iter().any(writes)))?;
                false
            }
            Statement::Show { .. } => false,
            Statement::CreateIndex { .. }
            | Statement::CreateConstraint { .. }
            | Statement::Drop { .. } => true,
        };
        let movable = match &statement {
            Statement::Query(q) | Statement::Profile(q) => movable_unwinds(q),
            _ => vec![],
        };
        let batched = match &statement {
            Statement::Query(q) | Statement::Profile(q) | Statement::Explain(q) => {
                q.parts().any(|p| {
                    p.clauses.iter().any(|c| {
                        matches!(
                            c,
                            Clause::Subquery {
                                in_transactions: Some(_),
                                ..
                            }
                        )
                    })
                })
            }
            _ => false,
        };
        let counted = match &statement {
            Statement::Query(q) | Statement::Profile(q) => q
                .parts()
                .map(|part| match count_shape(part) {
                    Some((patterns, None, _)) => match anonymise_ends(patterns, &[Row::new()]) {
                        Cow::Owned(p) => Some(p),
                        Cow::Borrowed(_) => None,
                    },
                    _ => None,
                })
                .collect(),
            _ => vec![],
        };
        let distinct = match &statement {
            Statement::Query(q) | Statement::Profile(q) => {
                q.parts().map(pipeline::distinct_clauses).collect()
            }
            _ => vec![],
        };
        Ok(Prepared {
            statement,
            text: text.into(),
            writes,
            batched,
            movable,
            counted,
            distinct,
            listing,
            needs: plexus_cypher::parameters(text),
        })
    }

    /// Refuses a run that lacks a parameter the text names, before it
    /// starts, naming the first such parameter and where it is first used
    /// (Neo4j refuses such a query whether or not the run would reach the
    /// parameter). An EXPLAIN needs no values: it plans with stand-ins.
    fn given(&self, params: &Params) -> Result<(), QueryError> {
        if matches!(self.statement, Statement::Explain(_)) {
            return Ok(());
        }
        match self.needs.iter().find(|(n, _)| !params.contains_key(n)) {
            Some((name, at)) => Err(self.located(QueryError::missing(name).at(*at))),
            None => Ok(()),
        }
    }

    /// The system time (µs since the epoch) the statement reads the graph
    /// as of (`MATCH … FOR SYSTEM_TIME AS OF at`), evaluated with
    /// `params`: the caller runs it on the storage's view of that instant
    /// (`Storage::read_as_of`). `None` for a statement that reads the
    /// current graph.
    pub fn as_of(&self, params: &Params, guard: &Guard) -> Result<Option<u64>, QueryError> {
        match &self.statement {
            Statement::Query(q) | Statement::Explain(q) | Statement::Profile(q) => {
                crate::as_of::query_instant(q, params, guard).map_err(|e| self.located(e))
            }
            _ => Ok(None),
        }
    }

    /// Whether the statement is an EXPLAIN or a PROFILE.
    pub fn shows_plan(&self) -> bool {
        matches!(
            self.statement,
            Statement::Explain(_) | Statement::Profile(_)
        )
    }

    /// Whether the statement writes (CREATE, MERGE, SET, REMOVE, DELETE,
    /// FOREACH, or a schema change), so a caller can pick the transaction kind.
    pub fn is_write(&self) -> bool {
        self.writes
    }

    /// Whether the statement has a `CALL { … } IN TRANSACTIONS`, which
    /// Neo4j runs only as an auto-commit query. Plexus runs the whole
    /// statement as one transaction: the same result, all or nothing.
    pub fn in_transactions(&self) -> bool {
        self.batched
    }

    fn query(&self) -> Result<(&Query, Mode), QueryError> {
        match &self.statement {
            Statement::Query(q) => Ok((q, Mode::Run)),
            Statement::Explain(q) => Ok((q, Mode::Explain)),
            Statement::Profile(q) => Ok((q, Mode::Profile)),
            _ => Err(QueryError::Unsupported(
                "a schema command needs a graph and a write transaction".into(),
            )),
        }
    }

    fn env<'a>(
        &'a self,
        params: &'a Params,
        guard: &'a Guard,
        procs: Option<&'a Procedures>,
    ) -> RunEnv<'a> {
        RunEnv {
            params,
            guard,
            procs,
            movable: &self.movable,
            counted: &self.counted,
            distinct: &self.distinct,
            plan_out: None,
        }
    }

    /// Runs the query with no graph: MATCH finds nothing, OPTIONAL MATCH
    /// binds nulls, clauses that write are refused.
    pub fn run_standalone(&self, params: &Params, guard: &Guard) -> Result<Table, QueryError> {
        self.given(params)?;
        if let Some(shown) = self.shown(None, params, guard) {
            return shown;
        }
        let (q, mode) = self.query()?;
        run(q, mode, Access::None, &self.env(params, guard, None)).map_err(|e| self.located(e))
    }

    /// A SHOW statement's result: the indexes or constraints of `g`, or the
    /// functions (which need no graph), through its tail if it has one;
    /// `None` for other statements, and for SHOW INDEXES without a graph.
    fn shown(
        &self,
        g: Option<&dyn GraphRead>,
        params: &Params,
        guard: &Guard,
    ) -> Option<Result<Table, QueryError>> {
        let Statement::Show { what, .. } = &self.statement else {
            return None;
        };
        let table = match crate::show::table(*what, g)? {
            Ok(t) => t,
            Err(e) => return Some(Err(e)),
        };
        let Some(q) = &self.listing else {
            return Some(Ok(crate::show::by_default(*what, table)));
        };
        let mut params = params.clone();
        params.insert(crate::show::ROWS.into(), crate::show::rows_param(table));
        let env = self.env(&params, guard, None);
        let access = g.map_or(Access::None, Access::Read);
        Some(run(q, Mode::Run, access, &env).map_err(|e| self.located(e)))
    }

    /// A run's error, placed in the text.
    fn located(&self, e: QueryError) -> QueryError {
        e.located(&self.text)
    }

    /// Runs the statement on a snapshot; clauses that write are refused.
    pub fn run_read(
        &self,
        g: &dyn GraphRead,
        params: &Params,
        guard: &Guard,
    ) -> Result<Table, QueryError> {
        self.read_with(g, params, guard, None)
    }

    /// [`Prepared::run_read`]; with `plan_apart`, an EXPLAIN's or a
    /// PROFILE's plan comes apart from the rows ([`Planned`]), as Neo4j
    /// answers them over Bolt, else it is the rows.
    pub fn run_read_planned(
        &self,
        g: &dyn GraphRead,
        params: &Params,
        guard: &Guard,
        plan_apart: bool,
    ) -> Result<Planned, QueryError> {
        let out = std::cell::RefCell::new(None);
        let rows = self.read_with(g, params, guard, plan_apart.then_some(&out))?;
        Ok(self.planned(rows, out.into_inner()))
    }

    /// [`Prepared::run_write`] with the plan apart when asked, as
    /// [`Prepared::run_read_planned`].
    pub fn run_write_planned(
        &self,
        txn: &mut WriteTxn,
        params: &Params,
        procs: Option<&Procedures>,
        guard: &Guard,
        plan_apart: bool,
    ) -> Result<Planned, QueryError> {
        let out = std::cell::RefCell::new(None);
        let rows = self.write_with(txn, params, procs, guard, plan_apart.then_some(&out))?;
        Ok(self.planned(rows, out.into_inner()))
    }

    fn read_with(
        &self,
        g: &dyn GraphRead,
        params: &Params,
        guard: &Guard,
        plan_out: PlanOut<'_>,
    ) -> Result<Table, QueryError> {
        self.given(params)?;
        if let Some(shown) = self.shown(Some(g), params, guard) {
            return shown;
        }
        let (q, mode) = self.query()?;
        let env = RunEnv {
            plan_out,
            ..self.env(params, guard, None)
        };
        valid_time(q, Access::Read(g), &env, |a| run(q, mode, a, &env)).map_err(|e| self.located(e))
    }

    fn planned(&self, rows: Table, steps: Option<Table>) -> Planned {
        Planned {
            rows,
            plan: steps.map(|steps| QueryPlan {
                profiled: matches!(self.statement, Statement::Profile(_)),
                steps,
            }),
        }
    }

    /// [`Prepared::run_read`], handing the result to `sink` as it is
    /// produced: a count or a LIMIT over a huge match streams in constant
    /// memory, and the first rows reach the sink before the last exist.
    pub fn run_read_into(
        &self,
        g: &dyn GraphRead,
        params: &Params,
        guard: &Guard,
        sink: &mut dyn RowSink,
    ) -> Result<(), QueryError> {
        self.given(params)?;
        if let Some(shown) = self.shown(Some(g), params, guard) {
            return feed(shown?, sink);
        }
        let (q, mode) = self.query()?;
        let env = self.env(params, guard, None);
        valid_time(q, Access::Read(g), &env, |a| {
            run_into(q, mode, a, &env, sink)
        })
        .map_err(|e| self.located(e))
    }

    /// Runs the statement in a write transaction, with procedures it may
    /// CALL. On an error the transaction may hold part of the statement's
    /// writes: the caller rolls it back (drops it).
    pub fn run_write(
        &self,
        txn: &mut WriteTxn,
        params: &Params,
        procs: Option<&Procedures>,
        guard: &Guard,
    ) -> Result<Table, QueryError> {
        self.write_with(txn, params, procs, guard, None)
    }

    fn write_with(
        &self,
        txn: &mut WriteTxn,
        params: &Params,
        procs: Option<&Procedures>,
        guard: &Guard,
        plan_out: PlanOut<'_>,
    ) -> Result<Table, QueryError> {
        self.given(params)?;
        if let Some(shown) = self.shown(Some(&*txn), params, guard) {
            return shown;
        }
        let env = RunEnv {
            plan_out,
            ..self.env(params, guard, procs)
        };
        match &self.statement {
            Statement::Query(_) | Statement::Explain(_) | Statement::Profile(_) => {
                let (q, mode) = self.query()?;
                valid_time(q, Access::Write(txn), &env, |a| run(q, mode, a, &env))
                    .map_err(|e| self.located(e))
            }
            other => crate::schema::apply(txn, other, params, guard),
        }
    }
}

/// Runs a query that needs no graph (see [`Prepared::run_standalone`]),
/// without limits.
pub fn run_standalone(text: &str, params: &Params) -> Result<Table, QueryError> {
    Prepared::new(text)?.run_standalone(params, &Guard::unlimited())
}

/// Runs a read-only query on a snapshot (see [`Prepared::run_read`]),
/// without limits.
pub fn run_read(g: &dyn GraphRead, text: &str, params: &Params) -> Result<Table, QueryError> {
    Prepared::new(text)?.run_read(g, params, &Guard::unlimited())
}

/// Runs a query in a write transaction (see [`Prepared::run_write`]),
/// without limits.
pub fn run_write(txn: &mut WriteTxn, text: &str, params: &Params) -> Result<Table, QueryError> {
    Prepared::new(text)?.run_write(txn, params, None, &Guard::unlimited())
}

/// What a run needs besides the query and the graph.
struct RunEnv<'a> {
    params: &'a Params,
    guard: &'a Guard,
    procs: Option<&'a Procedures>,
    movable: &'a [(usize, usize)],
    counted: &'a [Option<Vec<PathPattern>>],
    distinct: &'a [Vec<bool>],
    plan_out: PlanOut<'a>,
}

/// Where an EXPLAIN or PROFILE puts its plan when it is wanted apart from
/// the rows; `None`: the plan is the rows.
type PlanOut<'a> = Option<&'a std::cell::RefCell<Option<Table>>>;

fn writes(c: &Clause) -> bool {
    match c {
        Clause::Create { .. }
        | Clause::Merge { .. }
        | Clause::Set { .. }
        | Clause::Remove { .. }
        | Clause::Delete { .. }
        | Clause::Foreach { .. } => true,
        Clause::Subquery { query, .. } => query.parts().any(|p| p.clauses.iter().any(writes)),
        Clause::Call { procedure, .. } => builtin::get(procedure).is_some_and(|b| b.writes),
        _ => false,
    }
}

/// The outputs a CALL binds, as (output index, name in the row): the
/// YIELDed ones under their aliases, or all of them.
fn bind_yields(
    name: &str,
    outputs: &[String],
    yields: Option<&plexus_cypher::Yield>,
) -> Result<Vec<(usize, String)>, QueryError> {
    match yields {
        Some(y) if !y.star => {
            y.items
                .iter()
                .map(|(item, alias)| {
                    let i = outputs.iter().position(|o| o == item).ok_or_else(|| {
                        QueryError::Compile {
                            code: "UndefinedVariable",
                            message: format!("{name} yields no `{item}`"),
                        }
                    })?;
                    Ok((i, alias.clone().unwrap_or_else(|| item.clone())))
                })
                .collect()
        }
        _ => Ok(outputs.iter().cloned().enumerate().collect()),
    }
}

/// Runs `f` on `access`, or, when the query names a `FOR VALID_TIME AS
/// OF`, on the valid-time graph of `access`'s graph as of that instant
/// (the query only reads: `as_of::check` refused it otherwise). Inside a
/// write transaction, the view sees the transaction's own versions.
fn valid_time<T>(
    q: &Query,
    access: Access<'_>,
    env: &RunEnv<'_>,
    f: impl FnOnce(Access<'_>) -> Result<T, QueryError>,
) -> Result<T, QueryError> {
    let Some(when) = crate::as_of::valid_time(q, env.params, env.guard)? else {
        return f(access);
    };
    let g: &dyn GraphRead = match access {
        Access::None => return f(Access::None),
        Access::Read(g) => g,
        Access::Write(txn) => &*txn,
    };
    let view = plexus_temporal::ValidTimeView::reading(g, when);
    f(Access::Read(&view))
}

fn run(q: &Query, mode: Mode, access: Access<'_>, env: &RunEnv<'_>) -> Result<Table, QueryError> {
    let no_procs = Procedures::new();
    let procs = env.procs.unwrap_or(&no_procs);
    procedure::check(q, procs)?;
    let mut ex = Exec::new(access, env.params, env.guard, procs, 0);
    *ex.profile.get_mut() = (mode == Mode::Profile).then(Vec::new);
    ex.movable = if mode == Mode::Explain {
        &[]
    } else {
        env.movable
    };
    ex.counted = env.counted;
    ex.distinct = env.distinct;
    if mode == Mode::Explain {
        let plan = plan_table(&crate::plan::explain(q, ex.graph(), &ex.ctx(), None), None);
        return Ok(match env.plan_out {
            Some(out) => {
                *out.borrow_mut() = Some(plan);
                Table::default()
            }
            None => plan,
        });
    }
    let mut table = ex.single(&q.first, vec![Row::new()])?;
    for (i, (all, part)) in q.unions.iter().enumerate() {
        ex.part = i + 1;
        let t = ex.single(part, vec![Row::new()])?;
        if t.columns != table.columns {
            return Err(QueryError::Semantic {
                code: "DifferentColumnsInUnion",
                message: "all parts of a UNION must return the same columns".into(),
            });
        }
        table.rows.extend(t.rows);
        if !all {
            dedupe(&mut table.rows);
        }
    }
    if !q.unions.is_empty() && q.unions.iter().all(|(all, _)| !all) {
        dedupe(&mut table.rows);
    }
    if let Some(actual) = ex.profile.take() {
        let taken = ex.starts.borrow();
        let steps = crate::plan::explain(q, ex.graph(), &ex.ctx(), Some(&taken));
        let plan = plan_table(&steps, Some(&actual));
        match env.plan_out {
            // The query's own rows follow, as a query without PROFILE
            // gives them.
            Some(out) => *out.borrow_mut() = Some(plan),
            None => return Ok(plan),
        }
    }
    if let Some(g) = ex.graph() {
        for v in table.rows.iter_mut().flatten() {
            crate::graph::hydrate(g, v)?;
        }
    }
    Ok(table)
}

/// Runs a query, handing its result to `sink`: row by row as the pipeline
/// produces them for a single streamable part, else from the finished
/// table (UNION, EXPLAIN, PROFILE, aggregation and sorting at the end, parts
/// that write).
fn run_into(
    q: &Query,
    mode: Mode,
    access: Access<'_>,
    env: &RunEnv<'_>,
    sink: &mut dyn RowSink,
) -> Result<(), QueryError> {
    if mode != Mode::Run || !q.unions.is_empty() {
        return feed(run(q, mode, access, env)?, sink);
    }
    let no_procs = Procedures::new();
    let procs = env.procs.unwrap_or(&no_procs);
    procedure::check(q, procs)?;
    let mut ex = Exec::new(access, env.params, env.guard, procs, 0);
    ex.movable = env.movable;
    ex.counted = env.counted;
    ex.distinct = env.distinct;
    let mut table = ex.single_into(&q.first, vec![Row::new()], Some(&mut *sink))?;
    if ex.streamed.get() {
        return Ok(());
    }
    if let Some(g) = ex.graph() {
        for v in table.rows.iter_mut().flatten() {
            crate::graph::hydrate(g, v)?;
        }
    }
    feed(table, sink)
}

/// A finished table into a sink.
fn feed(table: Table, sink: &mut dyn RowSink) -> Result<(), QueryError> {
    sink.columns(&table.columns)?;
    for row in table.rows {
        sink.row(row)?;
    }
    Ok(())
}

/// The rows an `EXISTS { … }` or `COUNT { … }` subquery produces for
/// one outer row, read-only (`first`: stop at the first). A subquery
/// without RETURN counts the rows its last clause leaves.
pub(crate) fn subquery_rows(
    q: &Query,
    row: &Row,
    ctx: &Ctx<'_>,
    first: bool,
) -> Result<usize, QueryError> {
    let Some(g) = ctx.graph else {
        return Ok(0);
    };
    let procs = Procedures::new();
    let mut ex = Exec::new(Access::Read(g), ctx.params, ctx.guard, &procs, 1);
    let mut total = 0;
    for part in q.parts() {
        if part.clauses.iter().any(|c| matches!(c, Clause::Return(_))) {
            total += ex.single(part, vec![row.clone()])?.rows.len();
        } else {
            let mut rows = vec![row.clone()];
            for c in &part.clauses {
                rows = ex.clause(c, rows)?;
            }
            total += rows.len();
        }
        if first && total > 0 {
            break;
        }
    }
    Ok(total)
}

/// A plan as a table; with PROFILE's counts, the rows each clause produced
/// (on the clause's last step).
/// What one clause of a profiled run did.
struct Ran {
    part: usize,
    clause: usize,
    /// The rows it left.
    rows: usize,
    /// The time of its own work: from its start to its last row for a
    /// clause run over all the rows of the one before; in a pipeline, the
    /// time the rows spent in it (not in the clauses it handed them to).
    time: std::time::Duration,
}

fn plan_table(steps: &[crate::plan::Step], actual: Option<&[Ran]>) -> Table {
    let mut columns: Vec<String> = ["step", "operator", "details", "estimated_rows"]
        .map(String::from)
        .to_vec();
    if actual.is_some() {
        columns.push("rows".into());
        columns.push("time_ms".into());
        columns.push("self_ms".into());
    }
    let rows = steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut r = vec![
                Value::Int(i as i64 + 1),
                Value::String(s.operator.clone()),
                Value::String(s.details.clone()),
                s.estimate
                    .map_or(Value::Null, |e| Value::Int(e.round() as i64)),
            ];
            if let Some(a) = actual {
                let last_of_clause = steps
                    .get(i + 1)
                    .is_none_or(|n| (n.part, n.clause) != (s.part, s.clause));
                let got = a
                    .iter()
                    .find(|r| (r.part, r.clause) == (s.part, s.clause))
                    .filter(|_| last_of_clause);
                let rows = got.map(|g| g.rows as u64).or_else(|| s.actual.map(|a| a.0));
                r.push(rows.map_or(Value::Null, |n| {
                    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
                }));
                // Milliseconds, to the microsecond.
                let ms = |t: std::time::Duration| Value::Float(t.as_micros() as f64 / 1e3);
                r.push(got.map_or(Value::Null, |g| ms(g.time)));
                r.push(s.actual.map_or(Value::Null, |a| ms(a.1)));
            }
            r
        })
        .collect();
    Table { columns, rows }
}

struct Exec<'t, 'p> {
    access: Access<'t>,
    params: &'p Params,
    guard: &'p Guard,
    procs: &'p Procedures,
    /// The columns the last CALL yielded: a standalone CALL's result.
    call_columns: Vec<String>,
    /// Under PROFILE: what each clause of the top-level parts did.
    profile: std::cell::RefCell<Option<Vec<Ran>>>,
    /// The UNION part running.
    part: usize,
    /// Depth of subqueries: only the top level is profiled.
    nesting: usize,
    /// Top-level UNWINDs whose list may be moved (see [`Prepared`]).
    movable: &'p [(usize, usize)],
    /// Top-level counts' patterns, prepared (see [`Prepared`]).
    counted: &'p [Option<Vec<PathPattern>>],
    /// Top-level parts' distinct clauses, prepared (see [`Prepared`]).
    distinct: &'p [Vec<bool>],
    /// Set when the result rows went to a [`RowSink`] as they came.
    streamed: std::cell::Cell<bool>,
    /// One-hop pattern predicates' neighbour sets (`pattern/adjacent.rs`).
    adjacent: std::cell::RefCell<crate::pattern::adjacent::Adjacent>,
    /// Under PROFILE: where each pattern's walks started.
    starts: std::cell::RefCell<crate::pattern::start::Taken>,
    /// The parameters by name (`eval::ParamIndex`), for the top level
    /// only: a subquery runs per outer row.
    by_name: Option<crate::eval::ParamIndex<'p>>,
}

impl<'t, 'p> Exec<'t, 'p> {
    fn new(
        access: Access<'t>,
        params: &'p Params,
        guard: &'p Guard,
        procs: &'p Procedures,
        nesting: usize,
    ) -> Self {
        Exec {
            access,
            params,
            guard,
            procs,
            call_columns: vec![],
            profile: Default::default(),
            part: 0,
            nesting,
            movable: &[],
            counted: &[],
            distinct: &[],
            streamed: std::cell::Cell::new(false),
            adjacent: Default::default(),
            starts: Default::default(),
            by_name: (nesting == 0).then(|| crate::eval::ParamIndex::new(params)),
        }
    }
}

impl Exec<'_, '_> {
    /// Under PROFILE, that `clause` left `rows` rows after running since
    /// `began` (taken by [`Exec::clock`]).
    fn record(&self, clause: usize, rows: usize, began: Option<Instant>) {
        if let Some(b) = began {
            self.record_time(clause, rows, b.elapsed());
        }
    }

    /// The time now when this run is profiled: an unprofiled query reads
    /// no clock (a read of it was a tenth of a one-row query's cost).
    fn clock(&self) -> Option<Instant> {
        self.profiled().then(Instant::now)
    }

    /// Under PROFILE, that `clause` left `rows` rows and took `time`.
    fn record_time(&self, clause: usize, rows: usize, time: std::time::Duration) {
        if self.nesting == 0 {
            if let Some(p) = self.profile.borrow_mut().as_mut() {
                p.push(Ran {
                    part: self.part,
                    clause,
                    rows,
                    time,
                });
            }
        }
    }

    /// Whether this run is profiled (PROFILE, at the top level).
    fn profiled(&self) -> bool {
        self.nesting == 0 && self.profile.borrow().is_some()
    }

    fn graph(&self) -> Option<&dyn GraphRead> {
        match &self.access {
            Access::None => None,
            Access::Read(g) => Some(*g),
            Access::Write(t) => Some(&**t),
        }
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            params: self.params,
            graph: self.graph(),
            aggregates: None,
            guard: self.guard,
            // Sets of neighbours stay right only while nothing writes.
            adjacent: matches!(self.access, Access::Read(_)).then_some(&self.adjacent),
            starts: self.profile.borrow().is_some().then_some(&self.starts),
            by_name: self
                .by_name
                .as_ref()
                .map(|p| p as &dyn crate::eval::ParamLookup),
        }
    }

    fn txn(&mut self, clause: &Clause) -> Result<&mut WriteTxn, QueryError> {
        match &mut self.access {
            Access::Write(t) => Ok(&mut **t),
            _ => Err(QueryError::Unsupported(format!(
                "a clause that writes (at {}) in a read-only query",
                clause.span().start
            ))),
        }
    }

    /// Runs one part of a query from `rows`; the table RETURN makes (or
    /// an empty one for a query that ends in an update).
    fn single(&mut self, q: &SingleQuery, rows: Vec<Row>) -> Result<Table, QueryError> {
        self.single_into(q, rows, None)
    }

    /// [`Exec::single`], handing a streamed part's result rows to `out` as
    /// they are produced (then the table returned is empty and
    /// `self.streamed` is set).
    fn single_into(
        &mut self,
        q: &SingleQuery,
        mut rows: Vec<Row>,
        out: Option<&mut dyn RowSink>,
    ) -> Result<Table, QueryError> {
        // PROFILE runs the same way, so that it measures the plan that
        // runs (and shows the plan EXPLAIN shows).
        let began = self.clock();
        if let Some(t) = self.count_only(q, &rows)? {
            self.record_count(q, &t, true, began);
            return Ok(t);
        }
        if let Some(t) = self.count_distinct_only(q, &rows)? {
            self.record_count(q, &t, false, began);
            return Ok(t);
        }
        if let Some(g) = self.ctx().graph {
            if let Some(t) = count_property::count(g, q, &rows)? {
                self.record_count(q, &t, true, began);
                return Ok(t);
            }
        }
        if pipeline::streamable(q) {
            return self.stream_part(q, rows, out);
        }
        let mut charged = 0;
        for (ci, clause) in q.clauses.iter().enumerate() {
            let before = self.guard.held();
            let began = self.clock();
            if let Clause::Return(p) = clause {
                let (columns, projected) = project(&rows, p, &self.ctx())?;
                let table = Table::of_rows(columns, projected);
                self.record(ci, table.rows.len(), began);
                return Ok(table);
            }
            if let (
                Clause::Unwind {
                    expr:
                        Expr {
                            kind: ExprKind::Var(list),
                            ..
                        },
                    alias,
                    ..
                },
                0,
            ) = (clause, self.nesting)
            {
                if self.movable.contains(&(self.part, ci)) {
                    rows = unwind_moving(rows, list, alias)?;
                    self.record(ci, rows.len(), began);
                    continue;
                }
            }
            rows = match (clause, limit_after(q, ci, &self.ctx())) {
                (
                    Clause::Match {
                        optional,
                        patterns,
                        where_,
                        ..
                    },
                    Some(cap),
                ) => self.match_(*optional, patterns, where_.as_ref(), rows, Some(cap)),
                _ => self.clause(clause, rows),
            }
            .map_err(|e| e.at(clause.span().start))?;
            // The rows a clause materialised count against the budget until
            // the next clause has replaced them.
            let held = self.guard.held();
            self.guard.release(charged);
            charged = held.saturating_sub(before);
            self.record(ci, rows.len(), began);
        }
        self.guard.release(charged);
        if let Some(Clause::Call { .. }) = q.clauses.last() {
            let columns = std::mem::take(&mut self.call_columns);
            if columns.is_empty() {
                return Ok(Table {
                    columns,
                    rows: vec![],
                });
            }
            return Ok(Table::of_rows(columns, rows));
        }
        Ok(Table {
            columns: vec![],
            rows: vec![],
        })
    }

    /// Under PROFILE, what a part answered by a count (`MATCH … RETURN
    /// count(…)`, `t` its one row) did since `began`: its MATCH found as
    /// many matches as it counted when `matches` (else only its starts and
    /// hops say what they found), and its RETURN made the one row.
    fn record_count(&self, q: &SingleQuery, t: &Table, matches: bool, began: Option<Instant>) {
        // Taken only when profiled (`Exec::clock`).
        let Some(began) = began else {
            return;
        };
        let time = began.elapsed();
        let last = q.clauses.len().saturating_sub(1);
        match (matches, t.rows.first().and_then(|r| r.first())) {
            (true, Some(Value::Int(n))) => {
                let n = usize::try_from(*n).unwrap_or(usize::MAX);
                self.record_time(0, n, time);
                self.record_time(last, t.rows.len(), std::time::Duration::ZERO);
            }
            _ => self.record_time(last, t.rows.len(), time),
        }
    }

    fn clause(&mut self, clause: &Clause, rows: Vec<Row>) -> Result<Vec<Row>, QueryError> {
        let params = self.params;
        let env = Env {
            params,
            guard: self.guard,
        };
        Ok(match clause {
            Clause::Unwind { expr, alias, .. } => {
                let ctx = self.ctx();
                let mut next = Vec::new();
                for r in rows {
                    match eval(expr, &r, &ctx)? {
                        Value::Null => {}
                        Value::List(items) => {
                            for it in items {
                                let mut n = r.clone();
                                n.insert(alias, it);
                                ctx.guard.charge(row_size(&n))?;
                                next.push(n);
                            }
                        }
                        v => {
                            let mut n = r.clone();
                            n.insert(alias, v);
                            next.push(n);
                        }
                    }
                }
                next
            }
            Clause::Match {
                optional,
                patterns,
                where_,
                ..
            } => self.match_(*optional, patterns, where_.as_ref(), rows, None)?,
            Clause::With(p) => project(&rows, p, &self.ctx())?.1,
            Clause::Create { patterns, .. } => {
                let txn = self.txn(clause)?;
                let mut out = Vec::with_capacity(rows.len());
                for mut r in rows {
                    mutate::create(txn, &env, patterns, &mut r)?;
                    out.push(r);
                }
                out
            }
            Clause::Merge {
                pattern,
                on_create,
                on_match,
                ..
            } => {
                let txn = self.txn(clause)?;
                let mut out = Vec::new();
                for r in rows {
                    let mut found = Vec::new();
                    pattern::match_all(
                        &*txn,
                        &Ctx::with_graph(params, &*txn, env.guard),
                        std::slice::from_ref(pattern),
                        None,
                        &r,
                        &mut |m, times| {
                            found.extend(std::iter::repeat_n(m, times as usize).cloned());
                            Ok(false)
                        },
                    )?;
                    if found.is_empty() {
                        let mut r = r;
                        mutate::merge_refuses_nulls(txn, &env, pattern, &r)?;
                        mutate::create(txn, &env, std::slice::from_ref(pattern), &mut r)?;
                        mutate::set(txn, &env, on_create, &r)?;
                        out.push(r);
                    } else {
                        for m in found {
                            mutate::set(txn, &env, on_match, &m)?;
                            out.push(m);
                        }
                    }
                }
                out
            }
            Clause::Set { items, .. } => {
                let txn = self.txn(clause)?;
                for r in &rows {
                    mutate::set(txn, &env, items, r)?;
                }
                rows
            }
            Clause::Remove { items, .. } => {
                let txn = self.txn(clause)?;
                for r in &rows {
                    mutate::remove(txn, &env, items, r)?;
                }
                rows
            }
            Clause::Delete { detach, exprs, .. } => {
                let txn = self.txn(clause)?;
                mutate::delete(txn, &env, exprs, *detach, &rows)?;
                rows
            }
            Clause::Foreach {
                var, list, clauses, ..
            } => {
                for r in &rows {
                    let items = match eval(list, r, &self.ctx())? {
                        Value::List(items) => items,
                        Value::Null => vec![],
                        other => {
                            return Err(QueryError::type_error(format!(
                                "FOREACH takes a list, not {}",
                                other.value_type()
                            )))
                        }
                    };
                    for it in items {
                        let mut inner = r.clone();
                        inner.insert(var, it);
                        let mut inner_rows = vec![inner];
                        for c in clauses {
                            inner_rows = self
                                .clause(c, inner_rows)
                                .map_err(|e| e.at(c.span().start))?;
                        }
                    }
                }
                rows
            }
            Clause::Subquery { query, .. } => {
                let mut out = Vec::new();
                self.nesting += 1;
                for r in rows {
                    let mut parts = vec![self.single(&query.first, vec![r.clone()])?];
                    for (_, p) in &query.unions {
                        parts.push(self.single(p, vec![r.clone()])?);
                    }
                    if parts.iter().all(|t| t.columns.is_empty()) {
                        out.push(r);
                        continue;
                    }
                    let mut all_rows = Vec::new();
                    for t in &parts {
                        all_rows.extend(t.rows.iter().cloned());
                    }
                    if query.unions.iter().any(|(all, _)| !all) {
                        dedupe(&mut all_rows);
                    }
                    for vals in all_rows {
                        let mut n = r.clone();
                        n.extend(parts[0].columns.iter().cloned().zip(vals));
                        out.push(n);
                    }
                }
                self.nesting -= 1;
                out
            }
            Clause::Return(_) => rows,
            Clause::Call {
                procedure,
                args,
                yields,
                ..
            } => self.call(clause, procedure, args.as_deref(), yields.as_ref(), rows)?,
        })
    }

    /// `MATCH ... RETURN count(*)` as a whole query part: matches are
    /// counted as they are found, never built into rows.
    fn count_only(&self, q: &SingleQuery, rows: &[Row]) -> Result<Option<Table>, QueryError> {
        let Some((patterns, where_, item)) = count_shape(q) else {
            return Ok(None);
        };
        let ctx = self.ctx();
        let Some(g) = ctx.graph else {
            return Ok(None);
        };
        let patterns = match where_ {
            // A top-level part starts from one empty row: its patterns
            // were prepared once (`Prepared::counted`).
            None if self.nesting == 0 => Cow::Borrowed(
                self.counted
                    .get(self.part)
                    .and_then(Option::as_deref)
                    .unwrap_or(patterns),
            ),
            None => anonymise_ends(patterns, rows),
            Some(_) => Cow::Borrowed(patterns),
        };
        let mut n = 0i64;
        for r in rows {
            let found = pattern::count_all(g, &ctx, &patterns, where_, r)?;
            n = n.saturating_add(i64::try_from(found).unwrap_or(i64::MAX));
        }
        Ok(Some(count_table(item, n)))
    }

    /// `MATCH ... RETURN count(DISTINCT v)` as a whole query part, `v` an
    /// entity the MATCH binds: counted by identity as the matches are
    /// found (`count_distinct.rs`).
    fn count_distinct_only(
        &self,
        q: &SingleQuery,
        rows: &[Row],
    ) -> Result<Option<Table>, QueryError> {
        let Some((patterns, where_, item, var)) = count_distinct::shape(q) else {
            return Ok(None);
        };
        let ctx = self.ctx();
        let Some(g) = ctx.graph else {
            return Ok(None);
        };
        let n = count_distinct::count(g, &ctx, patterns, where_, var, rows)?;
        Ok(Some(count_table(item, n)))
    }

    /// MATCH: every extension of every row; with `cap`, stops once that
    /// many rows are found (LIMIT pushed down by the caller).
    fn match_(
        &self,
        optional: bool,
        patterns: &[PathPattern],
        where_: Option<&Expr>,
        rows: Vec<Row>,
        cap: Option<usize>,
    ) -> Result<Vec<Row>, QueryError> {
        let ctx = self.ctx();
        let cap = cap.unwrap_or(usize::MAX);
        let mut out = Vec::new();
        for r in rows {
            if out.len() >= cap {
                break;
            }
            let before = out.len();
            if let Some(g) = ctx.graph {
                pattern::match_all(g, &ctx, patterns, where_, &r, &mut |m, times| {
                    let bytes = row_size(m).saturating_mul(times as usize);
                    ctx.guard.charge(bytes)?;
                    out.extend(std::iter::repeat_n(m, times as usize).cloned());
                    Ok(out.len() >= cap)
                })?;
            }
            if optional && out.len() == before {
                let mut n = r;
                for p in patterns {
                    for v in pattern_vars(p) {
                        n.insert_absent(v, Value::Null);
                    }
                }
                out.push(n);
            }
        }
        Ok(out)
    }

    /// A procedure, once per row: a registered one, or a built-in one
    /// (which sees the graph, and may write); its records joined to the
    /// row under the yielded names.
    fn call(
        &mut self,
        clause: &Clause,
        procedure: &str,
        args: Option<&[Expr]>,
        yields: Option<&plexus_cypher::Yield>,
        rows: Vec<Row>,
    ) -> Result<Vec<Row>, QueryError> {
        // A registered procedure shadows a built-in of the same name; each
        // is looked up once, not per row.
        let registered = self.procs.get(procedure);
        let builtin = match registered {
            Some(_) => None,
            None => builtin::get(procedure),
        };
        let (name, inputs, outputs): (&str, Vec<String>, Vec<String>) = match (registered, builtin)
        {
            (Some((sig, _)), _) => (
                &sig.name,
                sig.inputs.iter().map(|(n, _)| n.clone()).collect(),
                sig.outputs.clone(),
            ),
            (None, Some(b)) => (
                b.name,
                b.inputs.iter().map(|(n, _)| n.to_string()).collect(),
                b.outputs.iter().map(|o| o.to_string()).collect(),
            ),
            (None, None) => {
                return Err(QueryError::Semantic {
                    code: "ProcedureNotFound",
                    message: format!("there is no procedure {procedure}()"),
                })
            }
        };
        let bound = bind_yields(name, &outputs, yields)?;
        self.call_columns = bound.iter().map(|(_, n)| n.clone()).collect();
        let pushed = pushed_filter(&bound, yields);
        let mut batched = match builtin {
            Some(b) => self.batch_call(clause, b, &inputs, args, yields, &rows)?,
            None => None,
        }
        .map(Vec::into_iter);
        let mut out = Vec::new();
        for r in rows {
            if let Some(records) = batched.as_mut().and_then(Iterator::next) {
                self.yield_records(&r, records, &bound, yields, &mut out)?;
                continue;
            }
            let values = self.call_args(&inputs, args, &r)?;
            let records = match registered {
                Some((sig, body)) => procedure::call(sig, body.as_ref(), values)?,
                None => match builtin {
                    Some(b) => match (b.filtered, pushed) {
                        (Some(f), Some((node, w))) => {
                            self.call_filtered(f, b.inputs.len(), values, &r, node, w)?
                        }
                        _ => {
                            let mut g = self.builtin_graph(clause, b.writes)?;
                            b.call(&mut g, values)?
                        }
                    },
                    None => vec![],
                },
            };
            if outputs.is_empty() {
                out.push(r);
                continue;
            }
            self.yield_records(&r, records, &bound, yields, &mut out)?;
        }
        Ok(out)
    }

    /// The rows a call on row `r` yields: `r` with each record's outputs
    /// bound, kept where the `YIELD`'s `WHERE` holds.
    fn yield_records(
        &self,
        r: &Row,
        records: Vec<Vec<Value>>,
        bound: &[(usize, String)],
        yields: Option<&plexus_cypher::Yield>,
        out: &mut Vec<Row>,
    ) -> Result<(), QueryError> {
        let ctx = self.ctx();
        for record in records {
            let mut n = r.clone();
            for (i, name) in bound {
                n.insert(name, record.get(*i).cloned().unwrap_or_default());
            }
            let keep = match yields.and_then(|y| y.where_.as_ref()) {
                Some(w) => eval(w, &n, &ctx)? == Value::Bool(true),
                None => true,
            };
            if keep {
                out.push(n);
            }
        }
        Ok(())
    }

    /// A built-in that writes one valid-time version a call, called on
    /// many rows: every row's version written as one batch
    /// (`plexus_temporal::write_versions`, which goes entity by entity when
    /// all are plain), each row given what its own call would yield; the
    /// arguments as `call_args` takes them. `None` (call row by row) for a
    /// built-in of another kind, for one row, or when
    /// an argument or the `YIELD`'s `WHERE` holds a subquery, a pattern
    /// or a comprehension: only those could read the valid-time versions
    /// an earlier row's call wrote (a query that writes reads no
    /// valid-time view), so the rest evaluate alike before or after them.
    fn batch_call(
        &mut self,
        clause: &Clause,
        b: &builtin::Builtin,
        inputs: &[String],
        args: Option<&[Expr]>,
        yields: Option<&plexus_cypher::Yield>,
        rows: &[Row],
    ) -> Result<Option<Vec<Vec<Vec<Value>>>>, QueryError> {
        let Some(version_of) = b.batch else {
            return Ok(None);
        };
        let self_contained = |e: &Expr| crate::eval::admits(e, &mut |_| None);
        if rows.len() < 2
            || !args.is_none_or(|a| a.iter().all(self_contained))
            || yields
                .and_then(|y| y.where_.as_ref())
                .is_some_and(|w| !self_contained(w))
        {
            return Ok(None);
        }
        let mut writes = Vec::with_capacity(rows.len());
        for r in rows {
            let mut values = self.call_args(inputs, args, r)?;
            values.resize(b.inputs.len(), Value::Null);
            writes.push(version_of(&values)?);
        }
        let mut g = self.builtin_graph(clause, true)?;
        let versions = plexus_temporal::write_versions(builtin::txn(&mut g, b.name)?, &writes)?;
        Ok(Some(
            versions
                .into_iter()
                .map(|v| vec![crate::valid_time::version_id_row(v)])
                .collect(),
        ))
    }

    /// A read-only built-in procedure called with its `YIELD … WHERE` as a
    /// filter on the node or relationship it yields (`vector.rs`); the
    /// `WHERE` still runs after it, on what it yields.
    fn call_filtered(
        &self,
        f: builtin::Filtered,
        inputs: usize,
        mut values: Vec<Value>,
        r: &Row,
        var: &str,
        where_: &Expr,
    ) -> Result<Vec<Vec<Value>>, QueryError> {
        values.resize(inputs, Value::Null);
        let ctx = self.ctx();
        let failed: std::cell::RefCell<Option<QueryError>> = Default::default();
        let row = std::cell::RefCell::new(r.clone());
        // Whether the `WHERE` holds with `var` bound to `value` (`None`:
        // the value could not be read, which fails the query).
        let holds = |value: Result<Value, QueryError>| -> bool {
            if failed.borrow().is_some() {
                return false;
            }
            let mut row = row.borrow_mut();
            let outcome = value.and_then(|v| {
                row.insert(var.to_string(), v);
                eval(where_, &row, &ctx)
            });
            match outcome {
                Ok(v) => v == Value::Bool(true),
                Err(e) => {
                    *failed.borrow_mut() = Some(e);
                    false
                }
            }
        };
        let g = match self.graph() {
            Some(g) => builtin::Graph::Read(g),
            None => builtin::Graph::None,
        };
        let out = match f {
            builtin::Filtered::Nodes(f) => {
                let pass = |n: plexus_storage::NodeId| {
                    holds(Ok(Value::Node(std::sync::Arc::new(
                        crate::graph::node_value(n),
                    ))))
                };
                let among = match self.graph() {
                    Some(g) => {
                        let label = index_label(g, values.first())?;
                        self.candidates(g, where_, var, r, label.as_deref())?
                    }
                    None => None,
                };
                f(&g, &values, Some(&pass), among.as_deref())
            }
            builtin::Filtered::Relationships(f) => {
                let pass = |e: plexus_storage::EdgeId| holds(relationship(self.graph(), e));
                f(&g, &values, Some(&pass))
            }
        };
        match failed.into_inner() {
            Some(e) => Err(e),
            None => out,
        }
    }

    /// The nodes an index lookup allows for a pushed-down `WHERE`: the
    /// smallest list among its conjuncts that an index answers (`None`
    /// when none does). `label` is the vector index's: an index of that
    /// label (or of every node) holds every candidate the search can rank.
    fn candidates(
        &self,
        g: &dyn GraphRead,
        where_: &Expr,
        node: &str,
        r: &Row,
        label: Option<&str>,
    ) -> Result<Option<Vec<plexus_storage::NodeId>>, QueryError> {
        let ctx = self.ctx();
        let mut best: Option<Vec<plexus_storage::NodeId>> = None;
        for l in crate::vector::lookup(where_, node) {
            let found = match l {
                crate::vector::Lookup::Equals(key, e) => {
                    g.find_nodes(label, key, &eval(e, r, &ctx)?)
                }
                crate::vector::Lookup::Element(key, e) => {
                    g.find_nodes_with_element(label, key, &eval(e, r, &ctx)?)
                }
            };
            match found {
                Ok(nodes) if best.as_ref().is_none_or(|b| nodes.len() < b.len()) => {
                    best = Some(nodes)
                }
                // No index on that key: the predicate filters the walk.
                Ok(_)
                | Err(
                    plexus_storage::StorageError::NoIndex(_)
                    | plexus_storage::StorageError::IndexStale(_),
                ) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(best)
    }

    /// A call's arguments: evaluated in the row, or (a standalone CALL
    /// without parentheses) taken from the parameters of the same names.
    fn call_args(
        &self,
        inputs: &[String],
        args: Option<&[Expr]>,
        r: &Row,
    ) -> Result<Vec<Value>, QueryError> {
        let ctx = self.ctx();
        match args {
            Some(a) => a.iter().map(|e| eval(e, r, &ctx)).collect(),
            None => inputs
                .iter()
                .map(|n| {
                    self.params
                        .get(n)
                        .cloned()
                        .ok_or_else(|| QueryError::missing(n))
                })
                .collect(),
        }
    }

    /// The graph a built-in procedure sees: the transaction when it writes.
    fn builtin_graph(
        &mut self,
        clause: &Clause,
        writes: bool,
    ) -> Result<builtin::Graph<'_>, QueryError> {
        if writes {
            return Ok(builtin::Graph::Write(self.txn(clause)?));
        }
        Ok(match self.graph() {
            Some(g) => builtin::Graph::Read(g),
            None => builtin::Graph::None,
        })
    }
}

/// The `YIELD … WHERE` a procedure may apply as a filter on the node it
/// yields first (its first output): when that output is yielded and the
/// predicate reads no other output. The node's alias and the predicate.
/// The relationship `e` as a value (its endpoints read from the graph).
fn relationship(g: Option<&dyn GraphRead>, e: plexus_storage::EdgeId) -> Result<Value, QueryError> {
    let edge = g.map(|g| g.edge(e)).transpose()?.flatten().ok_or_else(|| {
        QueryError::Unsupported(format!("relationship {} is not in the graph", e.0))
    })?;
    Ok(crate::graph::rel(e, edge.src, edge.dst))
}

fn pushed_filter<'a>(
    bound: &'a [(usize, String)],
    yields: Option<&'a plexus_cypher::Yield>,
) -> Option<(&'a str, &'a Expr)> {
    let w = yields?.where_.as_ref()?;
    let node = bound.iter().find(|(i, _)| *i == 0)?;
    bound
        .iter()
        .filter(|(i, _)| *i != 0)
        .all(|(_, alias)| crate::eval::free_of(w, alias))
        .then_some((node.1.as_str(), w))
}

/// Whether clauses may read variable `name`, walked in order. Conservative:
/// yes for any clause it does not look into (writes, CALL, subqueries,
/// FOREACH) and for any expression [`free_of`] cannot clear. The first
/// WITH or RETURN ends the walk: a name it does not pass on (no `*`, no
/// item reading it) is out of scope for every clause after it.
fn read_later(clauses: &[Clause], name: &str) -> bool {
    let free = |e: &Expr| crate::eval::free_of(e, name);
    let free_opt = |e: &Option<Expr>| e.as_ref().is_none_or(free);
    for c in clauses {
        match c {
            Clause::With(p) | Clause::Return(p) => {
                let clear = !p.star
                    && p.items.iter().all(|i| free(&i.expr))
                    && p.order_by.iter().all(|s| free(&s.expr))
                    && [&p.skip, &p.limit, &p.where_].into_iter().all(free_opt);
                return !clear;
            }
            Clause::Unwind { expr, .. } if free(expr) => {}
            Clause::Match {
                patterns, where_, ..
            } if free_opt(where_) && patterns.iter().all(|p| pattern_free_of(p, name)) => {}
            _ => return true,
        }
    }
    false
}

/// Whether pattern `p` neither binds nor reads `name` (its variables, its
/// property maps and inline WHEREs).
fn pattern_free_of(p: &PathPattern, name: &str) -> bool {
    let free = |e: &Option<Box<Expr>>| e.as_deref().is_none_or(|e| crate::eval::free_of(e, name));
    let nodes = std::iter::once(&p.element.start).chain(p.element.chain.iter().map(|(_, n)| n));
    let rels = p.element.chain.iter().map(|(r, _)| r);
    pattern_var_names(p).all(|v| v != name)
        && nodes.into_iter().all(|n| free(&n.props) && free(&n.where_))
        && rels.into_iter().all(|r| free(&r.props) && free(&r.where_))
}

/// The top-level `UNWIND list AS x` clauses, as (part, clause), after which
/// nothing in their part reads `list`.
fn movable_unwinds(q: &Query) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (pi, part) in q.parts().enumerate() {
        for (ci, c) in part.clauses.iter().enumerate() {
            if let Clause::Unwind {
                expr:
                    Expr {
                        kind: ExprKind::Var(list),
                        ..
                    },
                alias,
                ..
            } = c
            {
                if list != alias && !read_later(&part.clauses[ci + 1..], list) {
                    out.push((pi, ci));
                }
            }
        }
    }
    out
}

/// `UNWIND list AS x` when nothing after reads `list`: the list is moved
/// out of each row instead of being copied into every unwound row (the
/// `collect(...)` then `UNWIND` idiom otherwise copies it n × n times).
fn unwind_moving(rows: Vec<Row>, list: &str, alias: &str) -> Result<Vec<Row>, QueryError> {
    let mut next = Vec::new();
    for mut r in rows {
        let v = r.remove(list).ok_or_else(|| QueryError::Semantic {
            code: "UndefinedVariable",
            message: format!("variable `{list}` is not defined"),
        })?;
        match v {
            Value::Null => {}
            Value::List(items) => {
                for it in items {
                    let mut n = r.clone();
                    n.insert(alias.to_string(), it);
                    next.push(n);
                }
            }
            other => {
                r.insert(alias.to_string(), other);
                next.push(r);
            }
        }
    }
    Ok(next)
}

/// LIMIT pushdown: when clause `ci` is followed by a WITH or RETURN that
/// only projects (no aggregation, DISTINCT or ORDER BY) with a constant
/// SKIP/LIMIT, the rows it can use: the clause may stop there.
fn limit_after(q: &SingleQuery, ci: usize, ctx: &Ctx<'_>) -> Option<usize> {
    let (Clause::With(p) | Clause::Return(p)) = q.clauses.get(ci + 1)? else {
        return None;
    };
    let plain = !p.distinct
        && p.order_by.is_empty()
        && p.where_.is_none()
        && !p.items.iter().any(|i| has_aggregate(&i.expr));
    let n = |e: &Option<Expr>| match e.as_ref().map(|e| eval(e, &Row::new(), ctx)) {
        None => Some(0),
        Some(Ok(Value::Int(i))) if i >= 0 => Some(i as usize),
        _ => None,
    };
    p.limit.as_ref()?;
    if !plain {
        return None;
    }
    Some(n(&p.skip)?.saturating_add(n(&p.limit)?))
}

/// The one-row table of a count pushed into the match, its column named
/// as the projection names it.
fn count_table(item: &plexus_cypher::ProjectionItem, n: i64) -> Table {
    Table {
        columns: vec![item.alias.clone().unwrap_or_else(|| item.text.clone())],
        rows: vec![vec![Value::Int(n)]],
    }
}

/// `MATCH … RETURN count(*)` as a whole query part, plainly (no
/// DISTINCT, ORDER BY, SKIP, LIMIT or WHERE after it): its patterns, its
/// WHERE and the count's item.
pub(crate) fn count_shape(
    q: &SingleQuery,
) -> Option<(
    &[PathPattern],
    Option<&Expr>,
    &plexus_cypher::ProjectionItem,
)> {
    match_then_one_item(q).filter(|(patterns, _, item)| counts_every_match(&item.expr, patterns))
}

/// `count(*)`, or `count(v)` of a variable the patterns bind — a node, a
/// relationship, a list of them or a path, never null in a match of a
/// MATCH that is not optional — which therefore counts every match as
/// `count(*)` does. `MATCH (n:Person) RETURN count(n)` is how most people
/// write a count; through the projection it bound and folded every match
/// (`MATCH ()-[r]->() RETURN count(r)`: 250 ms at 500,000 relationships,
/// where the type counters answer `count(*)`).
fn counts_every_match(e: &Expr, patterns: &[PathPattern]) -> bool {
    if matches!(e.kind, ExprKind::CountStar) {
        return true;
    }
    match count_argument(e, false).map(|a| &a.kind) {
        Some(ExprKind::Var(v)) => patterns
            .iter()
            .any(|p| pattern_var_names(p).any(|n| n == v)),
        _ => false,
    }
}

/// The argument of `count(x)` (with `distinct`, of `count(DISTINCT x)`):
/// the shapes a count is pushed into start from it.
pub(crate) fn count_argument(e: &Expr, distinct: bool) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Call {
            name,
            distinct: d,
            args,
        } if *d == distinct && name.eq_ignore_ascii_case("count") => match args.as_slice() {
            [arg] => Some(arg),
            _ => None,
        },
        _ => None,
    }
}

/// A query part that is one MATCH (not optional) and a RETURN of one
/// item, with no DISTINCT, `*`, ORDER BY, SKIP, LIMIT or WHERE: its
/// patterns, WHERE and item (the shapes a count is pushed into).
pub(crate) fn match_then_one_item(
    q: &SingleQuery,
) -> Option<(
    &[PathPattern],
    Option<&Expr>,
    &plexus_cypher::ProjectionItem,
)> {
    let [Clause::Match {
        optional: false,
        patterns,
        where_,
        ..
    }, Clause::Return(p)] = q.clauses.as_slice()
    else {
        return None;
    };
    let [item] = p.items.as_slice() else {
        return None;
    };
    let plain = !p.distinct
        && !p.star
        && p.order_by.is_empty()
        && p.skip.is_none()
        && p.limit.is_none()
        && p.where_.is_none();
    plain.then_some((patterns.as_slice(), where_.as_ref(), item))
}

/// For counting: drops the names of each pattern's last relationship and
/// node when nothing else can refer to them (named once, not bound in the
/// incoming rows, no inline expression reads a variable), so the matcher
/// may count that hop from the degree counters. Copies the patterns only
/// when it drops a name (a per-query cost on the shortest counts).
pub(crate) fn anonymise_ends<'p>(
    patterns: &'p [PathPattern],
    rows: &[Row],
) -> Cow<'p, [PathPattern]> {
    // A pattern of one node has no hop to count from the counters.
    if patterns.iter().all(|p| p.element.chain.is_empty()) {
        return Cow::Borrowed(patterns);
    }
    let mut inline_vars = false;
    for p in patterns {
        let nodes = std::iter::once(&p.element.start).chain(p.element.chain.iter().map(|(_, n)| n));
        for n in nodes {
            inline_vars |= n.props.as_deref().is_some_and(reads_vars) || n.where_.is_some();
        }
        for (r, _) in &p.element.chain {
            inline_vars |= r.props.as_deref().is_some_and(reads_vars) || r.where_.is_some();
        }
    }
    let all: Vec<&str> = patterns.iter().flat_map(pattern_var_names).collect();
    let once = |v: &Option<String>| {
        v.as_deref().is_some_and(|v| {
            all.iter().filter(|x| **x == v).count() == 1 && rows.iter().all(|r| !r.contains_key(v))
        })
    };
    let drops = |p: &PathPattern| {
        p.element
            .chain
            .last()
            .is_some_and(|(r, n)| once(&r.var) || once(&n.var))
    };
    if inline_vars || !patterns.iter().any(drops) {
        return Cow::Borrowed(patterns);
    }
    let mut out = patterns.to_vec();
    for p in &mut out {
        if let Some((r, n)) = p.element.chain.last_mut() {
            if once(&r.var) {
                r.var = None;
            }
            if once(&n.var) {
                n.var = None;
            }
        }
    }
    Cow::Owned(out)
}

/// Whether an inline property map may read a variable (conservatively:
/// anything but literals and parameters).
fn reads_vars(e: &Expr) -> bool {
    match &e.kind {
        k if crate::eval::is_constant_leaf(k) => false,
        ExprKind::Map(entries) => entries.iter().any(|(_, v)| reads_vars(v)),
        ExprKind::List(items) => items.iter().any(reads_vars),
        _ => true,
    }
}

/// The variables of the patterns' nodes, in order (a name may repeat).
fn node_vars(patterns: &[PathPattern]) -> impl Iterator<Item = &str> {
    patterns.iter().flat_map(|p| {
        std::iter::once(&p.element.start)
            .chain(p.element.chain.iter().map(|(_, n)| n))
            .filter_map(|n| n.var.as_deref())
    })
}

/// The names a pattern binds, in order (a name may repeat), borrowed.
pub(crate) fn pattern_var_names(p: &PathPattern) -> impl Iterator<Item = &str> {
    let hops = p.element.chain.iter().flat_map(|(r, n)| [&r.var, &n.var]);
    std::iter::once(&p.var)
        .chain(std::iter::once(&p.element.start.var))
        .chain(hops)
        .filter_map(|v| v.as_deref())
}

pub(crate) fn pattern_vars(p: &plexus_cypher::PathPattern) -> Vec<String> {
    pattern_var_names(p).map(str::to_string).collect()
}

/// The label of the vector index a search names (its first argument), when
/// it has one.
fn index_label(g: &dyn GraphRead, name: Option<&Value>) -> Result<Option<String>, QueryError> {
    let Some(Value::String(name)) = name else {
        return Ok(None);
    };
    Ok(g.indexes()?
        .into_iter()
        .find(|i| i.name == *name)
        .and_then(|i| i.label))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An UNWIND moves its list out of the row exactly when no later
    /// clause of its part can read the list (`read_later`).
    #[test]
    fn an_unwind_moves_its_list_only_when_nothing_after_reads_it() {
        let movable = |tail: &str| {
            let text = format!("WITH [1, 2] AS l UNWIND l AS x {tail}");
            let q = plexus_cypher::parse(&text).expect("a valid query");
            // The UNWIND after the WITH: part 0, clause 1.
            movable_unwinds(&q).contains(&(0, 1))
        };
        // Not read: a projection that drops it ends its scope; a string
        // that spells its name is not a read.
        assert!(movable("RETURN x"));
        assert!(movable("RETURN x, 'l' AS s"));
        assert!(movable("MATCH (n {v: x}) WHERE n.w = x RETURN n"));
        assert!(movable("WITH x AS l RETURN l"));
        assert!(movable("UNWIND [x] AS y WITH y ORDER BY y RETURN y"));
        // Read, or maybe read.
        assert!(!movable("RETURN x, size(l)"));
        assert!(!movable("WITH * RETURN x"));
        assert!(!movable("WITH x ORDER BY size(l) RETURN x"));
        assert!(!movable("WITH x WHERE size(l) > 1 RETURN x"));
        assert!(!movable("MATCH (n {v: size(l)}) RETURN n"));
        assert!(!movable("MATCH (n)-[r WHERE r.w IN l]->() RETURN n"));
        assert!(!movable("MATCH (n) WHERE n.v IN l RETURN n"));
        assert!(!movable("UNWIND l AS y RETURN y"));
        assert!(!movable("CALL { WITH l RETURN size(l) AS s } RETURN x, s"));
        assert!(!movable("CREATE ({v: x}) RETURN x"));
    }

    /// The names of the last node of each prepared count's pattern, per
    /// part (`None`: the part keeps its own patterns).
    fn last_nodes(text: &str) -> Vec<Option<Vec<Option<String>>>> {
        let prepared = Prepared::new(text).expect("a valid query");
        prepared
            .counted
            .iter()
            .map(|c| {
                c.as_ref().map(|patterns| {
                    patterns
                        .iter()
                        .map(|p| p.element.chain.last().and_then(|(_, n)| n.var.clone()))
                        .collect()
                })
            })
            .collect()
    }

    #[test]
    fn counts_drop_the_names_nothing_reads_once_when_prepared() {
        // `b` is named once: dropped, so the matcher may count the hop.
        assert_eq!(
            last_nodes("MATCH (a {id: 1})-->(b) RETURN count(*)"),
            [Some(vec![None])]
        );
        // Named twice, or read by a WHERE: kept (no copy).
        assert_eq!(
            last_nodes("MATCH (a)-->(b), (b)-->(c) RETURN count(*)"),
            [Some(vec![Some("b".into()), None])]
        );
        assert_eq!(
            last_nodes("MATCH (a)-->(b) WHERE b.x = 1 RETURN count(*)"),
            [None]
        );
        // Not a plain count, or a single node: nothing prepared.
        assert_eq!(last_nodes("MATCH (a)-->(b) RETURN count(b.x)"), [None]);
        // `count(b)` counts every match as `count(*)` does.
        assert_eq!(
            last_nodes("MATCH (a {id: 1})-->(b) RETURN count(b)"),
            [Some(vec![None])]
        );
        assert_eq!(last_nodes("MATCH (a) RETURN count(*)"), [None]);
        // Each UNION part on its own.
        assert_eq!(
            last_nodes("MATCH (a) RETURN count(*) AS n UNION MATCH (a)-->(b) RETURN count(*) AS n"),
            [None, Some(vec![None])]
        );
    }

    /// Each top-level part's distinct clauses are prepared once, as
    /// `pipeline::distinct_clauses` finds them at a run.
    #[test]
    fn distinct_clauses_are_prepared_per_part() {
        let distinct = |text: &str| Prepared::new(text).expect("a valid query").distinct;
        // A DISTINCT projection ends the stage: the MATCH before it may
        // give each distinct row once.
        assert_eq!(
            distinct("MATCH (a)-[*1..2]->(b) RETURN DISTINCT b"),
            [vec![true, false]]
        );
        assert_eq!(distinct("MATCH (a)-->(b) RETURN b"), [vec![false, false]]);
        // Each UNION part on its own; a part that writes does not stream.
        assert_eq!(
            distinct("MATCH (a)-->(b) RETURN count(DISTINCT b) AS n UNION RETURN 1 AS n"),
            [vec![true, false], vec![false]]
        );
        assert_eq!(distinct("CREATE (a) RETURN a"), [vec![false, false]]);
        let q = plexus_cypher::parse("MATCH (a)-->(b) WITH DISTINCT b RETURN b").expect("parses");
        assert_eq!(
            distinct("MATCH (a)-->(b) WITH DISTINCT b RETURN b"),
            [super::pipeline::distinct_clauses(&q.first)]
        );
    }
}
