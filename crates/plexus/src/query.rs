//! Cypher on a database: `Database::query`, with a plan cache keyed by
//! query text so that a repeated query is parsed and checked once.

use crate::database::Database;
use crate::error::{Error, Result};
use crate::session::QueryOptions;
use plexus_query::{Planned, Prepared, Table};
use plexus_storage::Counters;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// Query parameters by name (`$name` in the text).
pub type Params = BTreeMap<String, plexus_common::Value>;

/// How many prepared queries the cache keeps; when full it starts over,
/// which keeps the cost of a burst of one-off queries bounded.
const PLAN_CACHE_SIZE: usize = 1024;

/// Prepared queries by their text.
#[derive(Default)]
pub(crate) struct PlanCache {
    plans: Mutex<HashMap<String, Arc<Prepared>>>,
}

impl PlanCache {
    /// The prepared query for `text`. The lock is held only to look up and
    /// to insert, never while parsing and checking: a slow or hostile query
    /// text does not hold up other queries. Two threads preparing the same
    /// new text at once both prepare it; the second insert wins, harmlessly.
    pub(crate) fn get(&self, text: &str) -> Result<Arc<Prepared>> {
        if let Some(p) = self.lock().get(text) {
            return Ok(p.clone());
        }
        let p = Arc::new(Prepared::new(text).map_err(Error::Query)?);
        let mut plans = self.lock();
        if plans.len() >= PLAN_CACHE_SIZE {
            plans.clear();
        }
        plans.insert(text.to_string(), p.clone());
        Ok(p)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Prepared>>> {
        self.plans.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

impl Database {
    /// Runs a Cypher query on `graph`. A query that only reads runs on a
    /// snapshot; one that writes runs in a write transaction that commits
    /// when the query succeeds, so a failing query leaves nothing behind.
    ///
    /// ```
    /// use plexus::{Database, Params, Value};
    /// let db = Database::in_memory().unwrap();
    /// db.query("default", "CREATE (:Person {name: 'Ann'})-[:KNOWS]->(:Person {name: 'Bob'})", &Params::new()).unwrap();
    /// let t = db.query("default", "MATCH (a)-[:KNOWS]->(b) RETURN b.name AS friend", &Params::new()).unwrap();
    /// assert_eq!(t.rows, vec![vec![Value::from("Bob")]]);
    /// ```
    pub fn query(&self, graph: &str, text: &str, params: &Params) -> Result<Table> {
        self.query_with(graph, text, params, &QueryOptions::default())
    }

    /// [`Database::query`] with a timeout, a memory budget or a
    /// cancellation handle; a query that reaches a limit fails with
    /// [`plexus_query::QueryError::ResourceLimit`] naming it, and a write
    /// query that fails commits nothing.
    ///
    /// ```
    /// use plexus::{Database, Params, QueryOptions};
    /// let db = Database::in_memory().unwrap();
    /// let opts = QueryOptions { memory_limit: Some(1 << 20), ..Default::default() };
    /// let e = db.query_with("default", "RETURN size(range(1, 10000000)) AS n", &Params::new(), &opts);
    /// assert_eq!(e.unwrap_err().kind(), plexus::ErrorKind::ResourceLimit);
    /// ```
    pub fn query_with(
        &self,
        graph: &str,
        text: &str,
        params: &Params,
        opts: &QueryOptions,
    ) -> Result<Table> {
        let plan = self.plans().get(text)?;
        Ok(self.run_prepared(graph, &plan, params, opts)?.0.rows)
    }

    /// Runs a prepared query as [`Database::query_with`] does.
    pub(crate) fn run_prepared(
        &self,
        graph: &str,
        plan: &Prepared,
        params: &Params,
        opts: &QueryOptions,
    ) -> Result<(Planned, Counters)> {
        let guard = opts.guard(self);
        if plan.is_write() {
            let mut txn = self.write(graph)?;
            let t = plan
                .run_write_planned(&mut txn, params, None, &guard, opts.plan_apart)
                .map_err(Error::Query)?;
            let counters = txn.counters();
            txn.commit()?;
            Ok((t, counters))
        } else {
            let snap = self.read_for(graph, plan, params, &guard)?;
            let t = plan
                .run_read_planned(&snap, params, &guard, opts.plan_apart)
                .map_err(Error::Query)?;
            Ok((t, Counters::default()))
        }
    }

    /// The snapshot a read-only plan runs on: the current graph, or the
    /// graph as of the instant its `FOR SYSTEM_TIME AS OF` names.
    pub(crate) fn read_for(
        &self,
        graph: &str,
        plan: &Prepared,
        params: &Params,
        guard: &plexus_query::Guard,
    ) -> Result<plexus_storage::ReadTxn> {
        match plan.as_of(params, guard).map_err(Error::Query)? {
            Some(t) => Ok(self.storage().read_as_of(graph, t)?),
            None => self.read(graph),
        }
    }

    /// Whether `text` writes, from its cached plan (parsed once, whatever
    /// the graph); the parse error when it is not a valid query.
    pub fn query_kind(&self, text: &str) -> Result<crate::QueryKind> {
        let plan = self.plans().get(text)?;
        Ok(crate::QueryKind::of(&plan))
    }

    /// How many prepared queries the plan cache holds.
    pub fn cached_plans(&self) -> usize {
        self.plans().len()
    }
}
