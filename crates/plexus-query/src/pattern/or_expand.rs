//! A path whose WHERE is an OR of alternatives that each pin one end of it
//! by an indexed equality — LDBC's IC12, `MATCH (tag:Tag)-[…*0..]->(base:
//! TagClass) WHERE tag.name = $x OR base.name = $x` — is walked once per
//! alternative, from the nodes that alternative's seek finds (forward from
//! the start, or reversed from the end), instead of from every node of a
//! label. A match is handed on by the walk of the first alternative it
//! satisfies: a later walk skips matches an earlier alternative holds, so
//! each match comes once, as from one walk. The whole WHERE is still
//! evaluated on every match.
//!
//! Taken only when the MATCH has this one pattern (so an alternative reads
//! nothing a later pattern binds), neither end is bound, and neither end
//! has a seek of its own (an inline property or a WHERE equality, range,
//! id or element on it), which is then the better start.

use super::{bound_node, first_index, walk_order, Matcher, Res};
use crate::eval::Row;
use plexus_common::Value;
use plexus_cypher::{Expr, NodePattern, PathKind, PathPattern};
use plexus_storage::NodeId;

/// One alternative of the OR: whether its walk goes from the path's end,
/// the nodes its seek found there, and the alternative itself.
pub(super) struct Branch<'e> {
    reverse: bool,
    ids: Vec<NodeId>,
    alternative: &'e Expr,
    /// The seek, for `EXPLAIN`: `(c:TagClass) on .name`.
    described: String,
}

/// What `EXPLAIN` shows for a path the matcher splits by an OR: each
/// alternative's seek, and whether its walk goes back from the path's end.
/// The matcher's own decision, with the variables bound earlier unknown.
pub(crate) fn planned(
    g: &dyn plexus_storage::GraphRead,
    ctx: &crate::eval::Ctx<'_>,
    p: &PathPattern,
    bound: &[String],
    where_: Option<&Expr>,
    single: bool,
) -> Option<String> {
    let one = std::slice::from_ref(p);
    let an = super::Analysis::new(one, where_);
    let mut m = super::matcher(g, ctx, &an, one, where_, super::Mode::All);
    m.single = single;
    let row: Row = bound.iter().map(|v| (v.clone(), Value::Null)).collect();
    let branches = m.or_branches(p, &row).ok()??;
    let each: Vec<String> = branches
        .iter()
        .map(|b| match b.reverse {
            true => format!("{}, walked back", b.described),
            false => b.described.clone(),
        })
        .collect();
    Some(format!(
        "one walk per alternative of an OR: {}",
        each.join("; ")
    ))
}

impl<'a> Matcher<'a, '_> {
    /// The walks an OR of the WHERE splits the path into, when every one of
    /// its alternatives pins an end of the path that an index serves.
    pub(super) fn or_branches(&self, p: &PathPattern, row: &Row) -> Res<Option<Vec<Branch<'a>>>> {
        let el = &p.element;
        let end = el.chain.last().map_or(&el.start, |(_, n)| n);
        if self.an.ors.is_empty() || !self.single || p.kind != PathKind::Normal {
            return Ok(None);
        }
        for np in [&el.start, end] {
            if bound_node(row, &np.var).is_some() || self.has_own_seek(np) {
                return Ok(None);
            }
        }
        'or: for or in &self.an.ors {
            let mut branches = Vec::with_capacity(or.alternatives.len());
            for (a, equalities) in &or.alternatives {
                match self.alternative_seek(&el.start, end, equalities, row)? {
                    Some((reverse, ids, described)) => branches.push(Branch {
                        reverse,
                        ids,
                        alternative: a,
                        described,
                    }),
                    None => continue 'or,
                }
            }
            return Ok(Some(branches));
        }
        Ok(None)
    }

    fn has_own_seek(&self, np: &NodePattern) -> bool {
        self.has_node_seek(np)
            || np
                .var
                .as_deref()
                .is_some_and(|v| self.an.ranges.iter().any(|h| h.var == v))
    }

    /// The first of an alternative's equalities on `start` or `end` that an
    /// index answers: whether it pins the end, and the nodes found.
    fn alternative_seek(
        &self,
        start: &NodePattern,
        end: &NodePattern,
        equalities: &[(&str, &str, &Expr)],
        row: &Row,
    ) -> Res<Option<(bool, Vec<NodeId>, String)>> {
        for &(var, key, e) in equalities {
            let Some((reverse, np)) = [(false, start), (true, end)]
                .into_iter()
                .find(|(_, np)| np.var.as_deref() == Some(var))
            else {
                continue;
            };
            let described = |l: Option<&str>| {
                let label = l.map(|l| format!(":{l}")).unwrap_or_default();
                format!("({var}{label}) on .{key}")
            };
            let Ok(v) = self.eval(e, row) else { continue };
            if v.is_null() {
                // `x = null` is never true: the alternative adds no match.
                return Ok(Some((reverse, vec![], described(None))));
            }
            if !v.is_storable() {
                continue;
            }
            let labels = np
                .labels
                .as_ref()
                .map(super::required_labels)
                .unwrap_or_default();
            let found = first_index(&labels, |l| {
                Ok((self.g.find_nodes(l, key, &v)?, l.map(str::to_string)))
            })?;
            if let Some((_, (ids, l))) = found {
                return Ok(Some((reverse, ids, described(l.as_deref()))));
            }
        }
        Ok(None)
    }

    /// Walks the path once per branch, each match handed on by the walk of
    /// the first alternative it satisfies.
    pub(super) fn walk_branches(
        &mut self,
        p: &PathPattern,
        branches: &[Branch<'_>],
        row: &mut Row,
        next: &mut dyn FnMut(&mut Self, &mut Row) -> Res<bool>,
    ) -> Res<bool> {
        // A later alternative's match is checked against the earlier ones
        // after the walk: none may skip that check (`Matcher::takes_end`).
        let ends = self.ends.take();
        let stop = self.walk_each_branch(p, branches, row, next);
        self.ends = ends;
        stop
    }

    fn walk_each_branch(
        &mut self,
        p: &PathPattern,
        branches: &[Branch<'_>],
        row: &mut Row,
        next: &mut dyn FnMut(&mut Self, &mut Row) -> Res<bool>,
    ) -> Res<bool> {
        for (k, b) in branches.iter().enumerate() {
            let (start, hops) = walk_order(&p.element, b.reverse);
            let earlier = &branches[..k];
            let stop = self.walk(
                p,
                start,
                &hops,
                b.reverse,
                &b.ids,
                None,
                row,
                &mut |m, row| {
                    for e in earlier {
                        if m.eval(e.alternative, row)? == Value::Bool(true) {
                            return Ok(false);
                        }
                    }
                    next(m, row)
                },
            )?;
            if stop {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
