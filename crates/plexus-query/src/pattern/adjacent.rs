//! `(a)-[:T]-(b)` as a predicate with both ends bound, row after row
//! against the same node: LDBC's IC10 asks `NOT (friend)-[:KNOWS]-(person)`
//! of thousands of friends and one person. Each answer used to read the
//! friend's counters and relationships; once an end comes back at the
//! next check, its neighbours of the hop's types are gathered into a set
//! and every later check against it is a lookup.
//!
//! Only in queries that only read (a write between rows would change the
//! sets), only for a hop of nothing but types and a direction between two
//! bare variables, and only for sets of at most [`MAX_ENTRIES`] together:
//! everything else goes to the matcher, as before.

use crate::eval::Row;
use crate::graph::type_names;
use plexus_common::Value;
use plexus_cypher::{PatternElement, RelPattern};
use plexus_storage::{Direction, GraphRead, NodeId, StorageError};
use rustc_hash::{FxHashMap, FxHashSet};

/// The most neighbours the sets hold together (about a megabyte).
const MAX_ENTRIES: usize = 1 << 16;

/// The neighbour sets of one query.
#[derive(Default)]
pub(crate) struct Adjacent {
    /// The last check's pattern (by address) and ends.
    last: Option<(usize, [u64; 2])>,
    /// (pattern, end 0 or 1, node) and its neighbours across the hop.
    sets: FxHashMap<(usize, usize, u64), FxHashSet<u64>>,
    entries: usize,
}

/// What gathering a set needs of a simple hop: its relationship pattern
/// (for the direction) and its types (`None`: any).
struct Hop<'e> {
    rel: &'e RelPattern,
    types: Option<Vec<&'e str>>,
}

/// The two nodes of `row` a one-hop element joins; `None` when it has more
/// hops or an end is not a bound node. Asked at every check, before any set
/// is looked up: it reads the row and nothing else.
fn ends(el: &PatternElement, row: &Row) -> Option<[u64; 2]> {
    let [(_, end)] = el.chain.as_slice() else {
        return None;
    };
    let node = |var: &Option<String>| match row.get(var.as_ref()?)? {
        Value::Node(n) => Some(n.id),
        _ => None,
    };
    Some([node(&el.start.var)?, node(&end.var)?])
}

/// The hop `el` is when a set may answer for it; `None` when it is more
/// than a hop of types between bare variables. Asked only before a set is
/// gathered: a set exists only for an element that passed it.
fn shape(el: &PatternElement) -> Option<Hop<'_>> {
    let [(rel, end)] = el.chain.as_slice() else {
        return None;
    };
    let bare = |n: &plexus_cypher::NodePattern| {
        n.labels.is_none() && n.props.is_none() && n.where_.is_none()
    };
    let plain_rel =
        rel.var.is_none() && rel.props.is_none() && rel.where_.is_none() && rel.length.is_none();
    if !bare(&el.start) || !bare(end) || !plain_rel {
        return None;
    }
    let types = match &rel.types {
        None => None,
        Some(t) => Some(type_names(t)?),
    };
    Some(Hop { rel, types })
}

/// Whether a set may answer `el` in `row`: its shape is simple and both
/// ends are bound nodes.
#[cfg(test)]
fn simple(el: &PatternElement, row: &Row) -> bool {
    shape(el).is_some() && ends(el, row).is_some()
}

impl Adjacent {
    /// Whether the hop `el` joins its two ends in `row`, when a set answers
    /// or an end came back and its set could be built; `None` sends the
    /// check to the matcher.
    pub(crate) fn check(
        &mut self,
        g: &dyn GraphRead,
        el: &PatternElement,
        row: &Row,
    ) -> Result<Option<bool>, StorageError> {
        let Some([a, b]) = ends(el, row) else {
            return Ok(None);
        };
        let id = el as *const PatternElement as usize;
        // A set of either end answers; the other end is looked up in it.
        for (end, node, other) in [(1, b, a), (0, a, b)] {
            if let Some(set) = self.sets.get(&(id, end, node)) {
                return Ok(Some(set.contains(&other)));
            }
        }
        let last = self.last.replace((id, [a, b]));
        let Some((_, was)) = last.filter(|(l, _)| *l == id) else {
            return Ok(None);
        };
        for (end, node, other) in [(1, b, a), (0, a, b)] {
            if was[end] != node {
                continue;
            }
            let Some(hop) = shape(el) else {
                return Ok(None);
            };
            // Seen from the second end, the hop runs the other way.
            let dir = super::hop_direction(hop.rel.direction, end == 1);
            let Some(set) = self.gather(g, node, dir, hop.types.as_deref())? else {
                return Ok(None);
            };
            let hit = set.contains(&other);
            self.sets.insert((id, end, node), set);
            return Ok(Some(hit));
        }
        Ok(None)
    }

    /// The neighbours of `node` across the hop, unless they would take the
    /// sets past [`MAX_ENTRIES`].
    fn gather(
        &mut self,
        g: &dyn GraphRead,
        node: u64,
        dir: Direction,
        types: Option<&[&str]>,
    ) -> Result<Option<FxHashSet<u64>>, StorageError> {
        let mut set = FxHashSet::default();
        let all: &[Option<&str>] = &[None];
        let named: Vec<Option<&str>>;
        let each = match types {
            None => all,
            Some(t) => {
                named = t.iter().map(|t| Some(*t)).collect();
                &named
            }
        };
        for t in each {
            for n in g.neighbors(NodeId(node), dir, *t)? {
                // Checked per neighbour: a node of millions never fills a set.
                if set.insert(n.node.0) && self.entries.saturating_add(set.len()) > MAX_ENTRIES {
                    return Ok(None);
                }
            }
        }
        self.entries = self.entries.saturating_add(set.len());
        Ok(Some(set))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn element(q: &str) -> PatternElement {
        let parsed = plexus_cypher::parse(&format!("MATCH (x) WHERE {q} RETURN 1")).unwrap();
        let plexus_cypher::Clause::Match {
            where_: Some(w), ..
        } = &parsed.first.clauses[0]
        else {
            panic!("{q}")
        };
        match &w.kind {
            plexus_cypher::ExprKind::Pattern(el) => el.clone(),
            other => panic!("{other:?}"),
        }
    }

    fn row(a: u64, b: u64) -> Row {
        let node = |id| {
            Value::Node(std::sync::Arc::new(plexus_common::NodeValue {
                id,
                ..Default::default()
            }))
        };
        Row::from([("a".to_string(), node(a)), ("b".to_string(), node(b))])
    }

    #[test]
    fn only_hops_of_types_between_bare_variables_are_simple() {
        let r = row(1, 2);
        for (q, simple_hop) in [
            ("(a)-[:T]-(b)", true),
            ("(a)<-[:T|U]-(b)", true),
            ("(a)-->(b)", true),
            ("(a)-[:T]->(b:L)", false),
            ("(a)-[r:T]->(b)", false),
            ("(a)-[:T*1..2]->(b)", false),
            ("(a)-[:T {w: 1}]->(b)", false),
            ("(a)-[:!T]->(b)", false),
            ("(a)-[:T]->()-[:T]->(b)", false),
            ("(a)-[:T]->(c)", false),
        ] {
            assert_eq!(simple(&element(q), &r), simple_hop, "{q}");
        }
    }
}
