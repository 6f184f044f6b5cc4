//! Starting a walk from relationships that a relationship property index
//! finds: `MATCH (a)-[r:T]->(b) WHERE r.key = $v` (or `$v IN r.key`, or
//! `[r:T {key: $v}]`) reads the index, then walks from those
//! relationships' ends, following only those relationships on that hop.
//!
//! It is chosen when neither end of the path is bound or has a seek of its
//! own (an inline property or a WHERE condition on its variable), and the
//! path's first or last relationship has named types that are all indexed
//! on the key, or names no type and an index of every type has the key.
//! Failing an equality, a range (`r.w >= $a AND r.w < $b`) seeks the same
//! indexes, when neither end node has a range of its own. The WHERE is
//! still evaluated on every match: the seek only narrows where the walk
//! starts.

use super::{bound_node, map_entries, Bounds, Hop, Matcher, Res};
use crate::eval::Row;
use crate::graph::type_names;
use plexus_common::Value;
use plexus_cypher::{NodePattern, PatternElement, RelPattern};
use plexus_storage::{Direction, EdgeId, NodeId, StorageError};
use rustc_hash::FxHashSet;

/// The relationships an index seek found for the first or last hop of a
/// path, and whether the walk goes against the written order so that this
/// hop comes first.
pub(super) struct RelSeek {
    pub reverse: bool,
    pub edges: Vec<EdgeId>,
    /// What the seek used, for `EXPLAIN`: the type(s) and the key.
    pub described: String,
    /// The operator `EXPLAIN` names.
    pub op: &'static str,
}

/// The relationships one hop of the walk may follow, keyed by the hop's
/// pattern (its address, as [`Matcher::hop_key`] keys the hop).
pub(super) type Only = Vec<(usize, FxHashSet<EdgeId>)>;

/// The types a seek on `rp` must find relationships of (`None` in the
/// list: an index of every type serves); `None` when `rp` cannot start a
/// seek (a variable length, or a type expression beyond names).
fn seek_types(rp: &RelPattern) -> Option<Vec<Option<&str>>> {
    if rp.length.is_some() {
        return None;
    }
    match rp.types.as_ref() {
        None => Some(vec![None]),
        Some(t) => type_names(t).map(|names| names.into_iter().map(Some).collect()),
    }
}

/// What `find` gives for each of the types, sorted, once each; `None`
/// when it has no index for one of them.
fn each_type<'t>(
    types: &[Option<&'t str>],
    mut find: impl FnMut(Option<&'t str>) -> Result<Vec<EdgeId>, StorageError>,
) -> Res<Option<Vec<EdgeId>>> {
    let mut out = Vec::new();
    for t in types {
        match find(*t) {
            Ok(ids) => out.extend(ids),
            Err(StorageError::NoIndex(_)) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
    }
    out.sort();
    out.dedup();
    Ok(Some(out))
}

/// What a seek used, for `EXPLAIN`: `r:T|U on each of .key`.
fn described(var: &str, types: &[Option<&str>], key: &str, how: &str) -> String {
    let names: Vec<&str> = types.iter().flatten().copied().collect();
    format!(
        "{var}{}{} on {how}.{key}",
        if names.is_empty() { "" } else { ":" },
        names.join("|"),
    )
}

/// For `EXPLAIN`: the relationship seek a MATCH of `p` would start with,
/// given the variables bound before it, as (its operator, what it uses,
/// which hop of the written pattern it consumes, the relationships it
/// finds).
pub(crate) fn planned(
    g: &dyn plexus_storage::GraphRead,
    ctx: &crate::eval::Ctx<'_>,
    p: &plexus_cypher::PathPattern,
    bound: &[String],
    where_: Option<&plexus_cypher::Expr>,
) -> Option<(&'static str, String, usize, usize)> {
    let one = std::slice::from_ref(p);
    let an = super::Analysis::new(one, where_);
    let m = super::matcher(g, ctx, &an, one, where_, super::Mode::All);
    let row: Row = bound.iter().map(|v| (v.clone(), Value::Null)).collect();
    let seek = m.rel_seek(&p.element, &row).ok()??;
    let hop = if seek.reverse {
        p.element.chain.len() - 1
    } else {
        0
    };
    Some((seek.op, seek.described, hop, seek.edges.len()))
}

impl Matcher<'_, '_> {
    /// The relationship seek for this path, when one applies.
    pub(super) fn rel_seek(&self, el: &PatternElement, row: &Row) -> Res<Option<RelSeek>> {
        let Some((last_rel, last_node)) = el.chain.last() else {
            return Ok(None);
        };
        for np in [&el.start, last_node] {
            if bound_node(row, &np.var).is_some() || self.has_node_seek(np) {
                return Ok(None);
            }
        }
        let hops = [(&el.chain[0].0, false), (last_rel, true)];
        for (rp, reverse) in hops {
            if let Some(edges) = self.rel_by_internal_id(rp, row)? {
                return Ok(Some(RelSeek {
                    reverse,
                    edges,
                    described: format!("{} by its internal id", rp.var.as_deref().unwrap_or("")),
                    op: "RelationshipByIdSeek",
                }));
            }
        }
        // A range on a relationship, when no end node has one to seek.
        let ranged = |np: &NodePattern| {
            np.var
                .as_deref()
                .is_some_and(|v| self.an.ranges.iter().any(|h| h.var == v))
        };
        let ranges = !(ranged(&el.start) || ranged(last_node));
        for range in [false, true] {
            for (rp, reverse) in hops {
                let found = match range {
                    false => self.rel_index_seek(rp, row)?,
                    true if ranges => self.rel_range_seek(rp, row)?,
                    true => None,
                };
                if let Some((edges, described)) = found {
                    return Ok(Some(RelSeek {
                        reverse,
                        edges,
                        described,
                        op: "RelationshipIndexSeek",
                    }));
                }
            }
        }
        Ok(None)
    }

    /// The relationship an `id(r) = expr` conjunct names, for a hop of one
    /// relationship ([`Matcher::internal_id`]); the walk still checks its
    /// type and direction.
    fn rel_by_internal_id(&self, rp: &RelPattern, row: &Row) -> Res<Option<Vec<EdgeId>>> {
        if seek_types(rp).is_none() {
            return Ok(None);
        }
        let held = |id: u64| Ok(self.g.edge_key_and_type(EdgeId(id))?.is_some());
        let found = self.internal_id(rp.var.as_deref(), row, &held)?;
        Ok(found.map(|ids| ids.into_iter().map(EdgeId).collect()))
    }

    /// The relationships of `rp`'s types whose property lies within the
    /// bounds WHERE puts on it, when an index of every type has the key.
    fn rel_range_seek(&self, rp: &RelPattern, row: &Row) -> Res<Option<(Vec<EdgeId>, String)>> {
        let (Some(types), Some(var)) = (seek_types(rp), rp.var.as_deref()) else {
            return Ok(None);
        };
        // A null bound passes nothing: the walk finds that without a seek.
        let Some(Bounds::Range { key, lo, hi }) = self.range_bounds(var, row)? else {
            return Ok(None);
        };
        let found = each_type(&types, |t| {
            match self.g.find_edges_in_range(t, key, lo.as_ref(), hi.as_ref()) {
                // Bounds of types an index cannot range over: no seek.
                Err(StorageError::Invalid(m) | StorageError::Unsupported(m)) => {
                    Err(StorageError::NoIndex(m))
                }
                other => other,
            }
        })?;
        Ok(found.map(|edges| (edges, described(var, &types, key, "range of "))))
    }

    /// Whether a node pattern names something a node seek may start from:
    /// an inline property, an equality (or an OR of them on one property),
    /// an id or a list element. A range
    /// is not counted: an equality on a relationship is taken to be more
    /// selective.
    pub(super) fn has_node_seek(&self, np: &NodePattern) -> bool {
        let Some(v) = np.var.as_deref() else {
            return np.props.is_some();
        };
        np.props.is_some()
            || self.an.hints.iter().any(|h| h.0 == v)
            || self.an.ids.iter().any(|h| h.0 == v)
            || self.an.internal_ids.iter().any(|h| h.0 == v)
            || self.an.elements.iter().any(|h| h.0 == v)
            || self.an.any_of.iter().any(|h| h.var == v)
    }

    /// The relationships of `rp`'s types that an index finds for one of its
    /// inline properties or WHERE conditions, when every type is indexed.
    fn rel_index_seek(&self, rp: &RelPattern, row: &Row) -> Res<Option<(Vec<EdgeId>, String)>> {
        let Some(types) = seek_types(rp) else {
            return Ok(None);
        };
        let var = rp.var.as_deref();
        let inline = rp.props.as_deref().map(map_entries).unwrap_or_default();
        let conditions = inline
            .iter()
            .map(|(k, e)| (false, k.as_str(), e))
            .chain(
                self.an
                    .hints
                    .iter()
                    .filter(|h| var == Some(h.0))
                    .map(|h| (false, h.1, h.2)),
            )
            .chain(
                self.an
                    .elements
                    .iter()
                    .filter(|h| var == Some(h.0))
                    .map(|h| (true, h.1, h.2)),
            );
        for (element, key, e) in conditions {
            // The value may read a variable bound only later: skip it then.
            let Ok(x) = self.eval(e, row) else { continue };
            if !x.is_storable() {
                continue;
            }
            let described = described(
                var.unwrap_or(""),
                &types,
                key,
                if element { "each of " } else { "" },
            );
            // A null finds nothing in an index, as neither `= null` nor
            // `null IN list` is ever true.
            if let Some(edges) = self.indexed_edges(&types, element, key, &x)? {
                return Ok(Some((edges, described)));
            }
        }
        Ok(None)
    }

    /// The relationships of these types holding `x` (as the value, or with
    /// `element` as an element of the list) under `key`; `None` unless an
    /// index serves every type.
    fn indexed_edges(
        &self,
        types: &[Option<&str>],
        element: bool,
        key: &str,
        x: &Value,
    ) -> Res<Option<Vec<EdgeId>>> {
        each_type(types, |t| match element {
            true => self.g.find_edges_with_element(t, key, x),
            false => self.g.find_edges(t, key, x),
        })
    }

    /// The nodes a walk whose first hop is `hop` leaves from along `edges`,
    /// and the restriction of that hop to them.
    pub(super) fn rel_seek_starts(&mut self, hop: &Hop<'_>, edges: &[EdgeId]) -> Res<Vec<NodeId>> {
        let dir = self.direction(hop);
        let mut out = Vec::new();
        for &e in edges {
            self.ctx.guard.check()?;
            let Some(r) = self.g.edge(e)? else { continue };
            match dir {
                Direction::Out => out.push(r.src),
                Direction::In => out.push(r.dst),
                Direction::Both => out.extend([r.src, r.dst]),
            }
        }
        out.sort();
        out.dedup();
        let key = self.hop_key(hop).0;
        self.only.retain(|(k, _)| *k != key);
        self.only.push((key, edges.iter().copied().collect()));
        Ok(out)
    }

    /// Lifts the restriction [`Matcher::rel_seek_starts`] put on a hop.
    pub(super) fn rel_seek_done(&mut self, hop: &Hop<'_>) {
        let key = self.hop_key(hop).0;
        self.only.retain(|(k, _)| *k != key);
    }

    /// The relationships a hop is restricted to, if it is.
    pub(super) fn only_edges(&self, hop: &Hop<'_>) -> Option<&FxHashSet<EdgeId>> {
        let key = self.hop_key(hop).0;
        self.only.iter().find(|(k, _)| *k == key).map(|(_, s)| s)
    }
}
