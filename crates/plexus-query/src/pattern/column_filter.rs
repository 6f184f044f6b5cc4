//! A start from a property's column for WHERE conjuncts on one property
//! that no index answers: `n.name STARTS WITH 'A'`, `n.kind <> 'x'`,
//! `n.kind IN $kinds`, `toLower(n.name) = $s`.
//!
//! Without it such a MATCH starts from every node (or every member of its
//! label) and evaluates the WHERE on each: 30–90 ms for 100,000 nodes in
//! `plexus-bench`'s skewed graph, where the same filter as an equality,
//! which the column answered, took 0.3 ms. A conjunct that reads the node
//! only as `n.key`, for one key, and otherwise only values known before
//! the MATCH, depends on the node through that value alone; so it is
//! evaluated once per distinct value of the column
//! (`GraphRead::nodes_where`), the node standing in as a map that holds
//! the value (`n.key` reads the same from either).
//!
//! It is used only when that cannot change an answer: the conjunct is
//! deterministic (no `rand()`), a node without the key would not pass (the
//! column lists only nodes holding it, so the conjuncts must not all be
//! true of a missing value), and no evaluation fails (on an error the walk
//! starts as before and meets the error, or not, node by node). The WHERE
//! is still checked on every candidate unless these conjuncts are all of it.

use super::{conjuncts, Matcher, Res, Seek, Start};
use crate::eval::{admits, repeatable, Row};
use plexus_common::Value;
use plexus_cypher::{Expr, ExprKind, NodePattern};
use std::collections::BTreeMap;

impl<'a> Matcher<'a, '_> {
    /// The nodes (with `label`, when given) whose property passes the
    /// WHERE conjuncts on it alone, from its column; `None` when no
    /// conjunct qualifies, no column serves, or the column cannot answer
    /// exactly (see the module's comment).
    pub(super) fn column_filter_seek<'p>(
        &'p self,
        np: &NodePattern,
        label: Option<&'p str>,
        row: &Row,
    ) -> Res<Option<Seek<'p>>> {
        let (Some(var), Some(w)) = (np.var.as_deref(), self.where_) else {
            return Ok(None);
        };
        let all = conjuncts(w);
        let mut key: Option<&'a str> = None;
        let mut mine = Vec::new();
        for c in &all {
            if let Some(k) = self.only_property(c, var, row) {
                if key.is_none_or(|first| first == k) {
                    key = Some(k);
                    mine.push(*c);
                }
            }
        }
        let Some(key) = key else {
            return Ok(None);
        };
        // The node's stand-in, its value replaced in place for each value
        // (a column of user ids has a value per node).
        let mut scratch = row.clone();
        let map = BTreeMap::from([(key.to_string(), Value::Null)]);
        scratch.insert(var.to_string(), Value::Map(map));
        let mut holds = |v: Option<&Value>| -> Option<bool> {
            if let Some(Value::Map(m)) = scratch.get_mut(var) {
                if let Some(slot) = m.get_mut(key) {
                    *slot = v.cloned().unwrap_or(Value::Null);
                }
            }
            for c in &mine {
                match self.eval(c, &scratch) {
                    Ok(Value::Bool(true)) => {}
                    Ok(_) => return Some(false),
                    Err(_) => return None,
                }
            }
            Some(true)
        };
        // A node without the key would pass: the column cannot say which.
        // A dry seek (EXPLAIN) decides as the run will, unless the values
        // the conjuncts read are known only then.
        let missing = holds(None);
        let start = Start::ColumnFilter { label, key };
        if self.dry.is_some() {
            // Named, not read: a column is built when first read.
            let named = missing != Some(true) && self.g.columns_serve();
            return Ok(named.then(|| Seek::of(start, vec![])));
        }
        if missing != Some(false) {
            return Ok(None);
        }
        let mut failed = false;
        let ids = self.g.nodes_where(label, key, &mut |v| {
            holds(Some(v)).unwrap_or_else(|| {
                failed = true;
                false
            })
        })?;
        let Some(ids) = ids.filter(|_| !failed) else {
            return Ok(None);
        };
        if mine.len() == all.len() {
            self.where_answered.set(true);
        }
        Ok(Some(Seek::of(start, ids)))
    }

    /// The key of `var` that conjunct `c` reads, when it reads `var` only
    /// as `var.key` for that one key, every other variable it reads is
    /// bound before the MATCH, and it is deterministic.
    fn only_property(&self, c: &'a Expr, var: &str, row: &Row) -> Option<&'a str> {
        if !repeatable(c) {
            return None;
        }
        let mut key: Option<&'a str> = None;
        let only = admits(c, &mut |x| match &x.kind {
            ExprKind::Property(b, k) if matches!(&b.kind, ExprKind::Var(v) if v == var) => {
                Some(*key.get_or_insert(k.as_str()) == k.as_str())
            }
            // A dry seek's row binds what the MATCH's input binds (to null).
            ExprKind::Var(v) => Some(v != var && row.contains_key(v)),
            _ => None,
        });
        key.filter(|_| only)
    }
}
