//! Cypher on a database: `Database::query`, with a plan cache keyed by
//! query text so that a repeated query is parsed and checked once.

use crate::database::Database;
use crate::error::{Error, Result};
use plexus_query::{Prepared, Table};
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
    fn get(&self, text: &str) -> Result<Arc<Prepared>> {
        let mut plans = self.plans.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = plans.get(text) {
            return Ok(p.clone());
        }
        let p = Arc::new(Prepared::new(text).map_err(Error::Query)?);
        if plans.len() >= PLAN_CACHE_SIZE {
            plans.clear();
        }
        plans.insert(text.to_string(), p.clone());
        Ok(p)
    }

    pub(crate) fn len(&self) -> usize {
        self.plans.lock().unwrap_or_else(|p| p.into_inner()).len()
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
        let plan = self.plans().get(text)?;
        if plan.is_write() {
            let mut txn = self.write(graph)?;
            let t = plan
                .run_write(&mut txn, params, None)
                .map_err(Error::Query)?;
            txn.commit()?;
            Ok(t)
        } else {
            let snap = self.read(graph)?;
            plan.run_read(&snap, params).map_err(Error::Query)
        }
    }

    /// How many prepared queries the plan cache holds.
    pub fn cached_plans(&self) -> usize {
        self.plans().len()
    }
}
