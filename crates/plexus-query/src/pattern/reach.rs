//! The distinct ends of a variable-length hop, breadth-first: each node
//! once, instead of every trail to it (`count(DISTINCT b)`, `WITH DISTINCT
//! friend` after `-[:KNOWS*1..2]-(friend)`), then any hops after it whose
//! types it shares none of ([`Matcher::reaches`]).
//!
//! The shortest walk of at least one relationship from the start to
//! another node repeats no node, so no relationship: a node other than the
//! start ends a trail of `1..=max` relationships exactly when a walk
//! reaches it within `max`. The start itself is different. Directed, a
//! walk back to it is a cycle, so a trail. Undirected, a walk may go out
//! and back along one relationship, which a trail may not: the start ends
//! a trail only through a cycle of distinct relationships, and [`Loops`]
//! finds the shortest one through it from the same breadth-first walk.

use super::{Hop, Matcher, Mode, Res, Trail};
use crate::eval::Row;
use crate::graph::type_names;
use plexus_cypher::{NodePattern, PathKind, PathPattern, RelPattern};
use plexus_storage::{Direction, EdgeId, Neighbor, NodeId};
use rustc_hash::{FxHashMap, FxHashSet};

/// The shortest cycle through the start of an undirected breadth-first
/// walk. Each node reached keeps its depth, the relationship it was reached
/// by and the start's relationship its branch of the walk began with. A
/// relationship the walk did not take between two reached nodes of
/// different branches (or back to the start, other than by the branch's
/// own first relationship) closes a cycle through the start of their
/// depths plus one; a relationship between nodes of one branch closes a
/// cycle that misses it. The least such length is the shortest cycle
/// through the start (a closed trail through it holds a cycle through it).
#[derive(Default)]
struct Loops {
    /// Depth, the relationship taken to the node, its branch's first one.
    reached: FxHashMap<NodeId, (usize, EdgeId, EdgeId)>,
    shortest: Option<usize>,
}

impl Loops {
    /// `n` leads from `at` (the start, or a node reached) to a node reached
    /// already, or back to the start.
    fn seen_again(&mut self, start: NodeId, at: NodeId, n: &Neighbor) {
        let here = self.reached.get(&at).copied();
        let there = self.reached.get(&n.node).copied();
        let taken = |x: Option<(usize, EdgeId, EdgeId)>| x.is_some_and(|(_, by, _)| by == n.edge);
        if taken(here) || taken(there) {
            return;
        }
        let len = match (at == start, n.node == start, here, there) {
            // A self-loop at the start.
            (true, true, ..) => 1,
            (true, false, _, Some((d, _, _))) | (false, true, Some((d, _, _)), _) => d + 1,
            (false, false, Some((d, _, b)), Some((e, _, c))) if b != c => d + e + 1,
            _ => return,
        };
        self.shortest = Some(self.shortest.map_or(len, |s| s.min(len)));
    }

    fn reach(&mut self, at: NodeId, n: &Neighbor) {
        let (depth, branch) = match self.reached.get(&at) {
            Some(&(d, _, b)) => (d + 1, b),
            None => (1, n.edge),
        };
        self.reached.insert(n.node, (depth, n.edge, branch));
    }
}

/// What a node the walk reached costs the query's memory budget (its
/// entry in the visited set and the frontier).
const PER_NODE: usize = 32;

/// Whether `hop` and every hop of `rest` name their relationship types and
/// `hop` shares none with them.
fn types_apart(hop: &Hop<'_>, rest: &[Hop<'_>]) -> bool {
    fn names<'p>(h: &Hop<'p>) -> Option<Vec<&'p str>> {
        h.rel.types.as_ref().and_then(type_names)
    }
    let Some(own) = names(hop) else {
        return false;
    };
    rest.iter()
        .all(|h| names(h).is_some_and(|t| t.iter().all(|t| !own.contains(t))))
}

/// Whether a variable-length `hop`, with `rest` after it in its pattern,
/// is walked by [`Matcher::reach`]: the consumer needs distinct rows
/// (`distinct`), no relationship of the match comes before it (`first`:
/// none to keep distinct from), no path variable needs the trail
/// (`trail`), nothing reads its relationships (no relationship variable or
/// inline WHERE), and it may start at one hop or none. Hops may follow it
/// when no relationship they can take is one it can: both name their
/// types, and none in common (`-[:KNOWS*1..2]-(friend)-[:IS_LOCATED_IN]->
/// (city)`); so may the MATCH's `later` patterns ([`later_apart`]). Then no
/// trail to an end excludes a relationship the rest takes, and each end
/// once gives every distinct row.
#[allow(clippy::too_many_arguments)]
fn applies(
    distinct: bool,
    first: bool,
    trail: bool,
    later: &[PathPattern],
    hop: &Hop<'_>,
    rest: &[Hop<'_>],
    min: usize,
    max: usize,
) -> bool {
    distinct
        && (later.is_empty() || later_apart(hop, later))
        && (rest.is_empty() || types_apart(hop, rest))
        && first
        && !trail
        && hop.rel.var.is_none()
        && hop.rel.where_.is_none()
        && (min <= 1 || (min == 2 && max == 2))
}

/// Whether every relationship the MATCH's `later` patterns may take has a
/// type `hop` does not (both name their types): then they cannot share a
/// relationship with a trail of `hop`, and its distinct ends give every
/// distinct row of theirs too (IC10's `-[:KNOWS*2..2]-(friend),
/// (friend)-[:IS_LOCATED_IN]->(city)`).
fn later_apart(hop: &Hop<'_>, later: &[PathPattern]) -> bool {
    let Some(own) = hop.rel.types.as_ref().and_then(type_names) else {
        return false;
    };
    later.iter().all(|p| {
        p.kind == PathKind::Normal
            && p.element.chain.iter().all(|(r, _)| {
                r.types
                    .as_ref()
                    .and_then(type_names)
                    .is_some_and(|t| t.iter().all(|t| !own.contains(t)))
            })
    })
}

/// For EXPLAIN: whether the walk takes the variable-length hop `i` of
/// `walked` (a pattern's hops in walking order) breadth-first, each end
/// once. `first`: no pattern before this one in the MATCH has a
/// relationship; the rest as [`applies`] has them.
pub(crate) fn planned(
    walked: &[(&RelPattern, &NodePattern, bool)],
    i: usize,
    distinct: bool,
    first: bool,
    trail: bool,
    later: &[PathPattern],
) -> bool {
    let hops: Vec<Hop<'_>> = walked
        .iter()
        .map(|&(rel, node, reversed)| Hop {
            rel,
            node,
            reversed,
        })
        .collect();
    let (Some(hop), Some(rest)) = (hops.get(i), hops.get(i + 1..)) else {
        return false;
    };
    let Some((min, max)) = hop.rel.length else {
        return false;
    };
    let min = min.unwrap_or(1) as usize;
    let max = max.map_or(usize::MAX, |m| m as usize);
    applies(distinct, first && i == 0, trail, later, hop, rest, min, max)
}

impl Matcher<'_, '_> {
    /// Whether a variable-length hop is walked by [`Matcher::reach`]
    /// ([`applies`]), as this walk stands.
    pub(super) fn reaches(&self, hop: &Hop<'_>, rest: &[Hop<'_>], min: usize, max: usize) -> bool {
        let later = self.all_patterns.len().saturating_sub(self.patterns_after);
        applies(
            self.mode == Mode::Distinct,
            self.used.is_empty(),
            self.trail_needed,
            &self.all_patterns[later..],
            hop,
            rest,
            min,
            max,
        )
    }

    /// Before [`Matcher::reach`]: when its ends are the matches' distinct
    /// nodes (the hop ends the last pattern and binds the counted node),
    /// each comes once, so they form a run of [`super::DistinctNodes`] that needs
    /// no second hashing. Whether one began, for [`Matcher::end_run`].
    pub(super) fn begin_run(&mut self, hop: &Hop<'_>, rest: &[Hop<'_>]) -> bool {
        let run = rest.is_empty() && self.takes_end(&hop.node.var);
        if let (true, Some(e)) = (run, &mut self.ends) {
            e.nodes.begin_run();
            e.in_run = true;
        }
        run
    }

    /// After [`Matcher::reach`]: later ends are not the run's.
    pub(super) fn end_run(&mut self, run: bool) {
        if let (true, Some(e)) = (run, &mut self.ends) {
            e.in_run = false;
        }
    }

    /// The distinct ends of a variable-length hop from `start` (see the
    /// module's comment), each arrived at once and followed by `rest`. The
    /// start itself is an end at depth 0 when `min` is 0, and when a cycle
    /// of at most `max` relationships leads back to it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn reach(
        &mut self,
        hop: &Hop<'_>,
        rest: &[Hop<'_>],
        start: NodeId,
        min: usize,
        max: usize,
        row: &mut Row,
        trail: &mut Trail,
        done: &mut dyn FnMut(&mut Self, &mut Row, &Trail) -> Res<bool>,
    ) -> Res<bool> {
        if min == 2 && max == 2 {
            return self.two_step_ends(hop, rest, start, row, trail, done);
        }
        let mut seen: FxHashSet<NodeId> = FxHashSet::default();
        // Undirected, the start is an end only through a cycle: kept out
        // of the walk's ends and decided by `loops` once the walk is done.
        let mut loops = (self.direction(hop) == Direction::Both).then(Loops::default);
        if min == 0 || loops.is_some() {
            seen.insert(start);
        }
        if min == 0 && self.arrive(hop, rest, start, &[], row, trail, done)? {
            return Ok(true);
        }
        // The visited set and the frontier are the walk's memory: charged
        // to the query's budget as they grow, given back when it ends.
        let mut charged = 0;
        let stop = self.breadth_first(
            hop,
            rest,
            start,
            max,
            &mut seen,
            &mut loops,
            &mut charged,
            row,
            trail,
            done,
        );
        self.ctx.guard.release(charged);
        if stop? {
            return Ok(true);
        }
        let closes = loops.and_then(|l| l.shortest).is_some_and(|len| len <= max);
        if min > 0 && closes {
            return self.arrive(hop, rest, start, &[], row, trail, done);
        }
        Ok(false)
    }

    /// The distinct ends of trails of exactly two relationships of `hop`
    /// from `start`: across each relationship from a first step's end other
    /// than the one that step took (a trail repeats none; an end at one
    /// step may be an end at two as well, through a triangle).
    fn two_step_ends(
        &mut self,
        hop: &Hop<'_>,
        rest: &[Hop<'_>],
        start: NodeId,
        row: &mut Row,
        trail: &mut Trail,
        done: &mut dyn FnMut(&mut Self, &mut Row, &Trail) -> Res<bool>,
    ) -> Res<bool> {
        let mut seen: FxHashSet<NodeId> = FxHashSet::default();
        let mut charged = 0;
        let stop = (|| {
            for first in self.steps(hop, start)? {
                if !self.rel_ok(hop.rel, &first, row)? {
                    continue;
                }
                for n in self.steps(hop, first.node)? {
                    if n.edge == first.edge
                        || seen.contains(&n.node)
                        || !self.rel_ok(hop.rel, &n, row)?
                    {
                        continue;
                    }
                    self.ctx.guard.charge(PER_NODE)?;
                    charged += PER_NODE;
                    seen.insert(n.node);
                    if self.arrive(hop, rest, start, &[n], row, trail, done)? {
                        return Ok(true);
                    }
                }
            }
            Ok(false)
        })();
        self.ctx.guard.release(charged);
        stop
    }

    #[allow(clippy::too_many_arguments)]
    fn breadth_first(
        &mut self,
        hop: &Hop<'_>,
        rest: &[Hop<'_>],
        start: NodeId,
        max: usize,
        seen: &mut FxHashSet<NodeId>,
        loops: &mut Option<Loops>,
        charged: &mut usize,
        row: &mut Row,
        trail: &mut Trail,
        done: &mut dyn FnMut(&mut Self, &mut Row, &Trail) -> Res<bool>,
    ) -> Res<bool> {
        let mut frontier = vec![start];
        let mut depth = 0;
        while !frontier.is_empty() && depth < max {
            depth += 1;
            let mut next = Vec::new();
            // On a remote store a level's ends are gathered first, so
            // that their records are read at once before they arrive.
            let mut level = Vec::new();
            self.read_ahead(hop, frontier.iter().copied())?;
            for &at in &frontier {
                for n in self.steps(hop, at)? {
                    if !self.rel_ok(hop.rel, &n, row)? {
                        continue;
                    }
                    if seen.contains(&n.node) {
                        if let Some(l) = loops.as_mut() {
                            l.seen_again(start, at, &n);
                        }
                        continue;
                    }
                    self.ctx.guard.charge(PER_NODE)?;
                    *charged += PER_NODE;
                    seen.insert(n.node);
                    if let Some(l) = loops.as_mut() {
                        l.reach(at, &n);
                    }
                    next.push(n.node);
                    if self.ahead.on() {
                        level.push(n);
                    } else if self.arrive(hop, rest, start, &[n], row, trail, done)? {
                        return Ok(true);
                    }
                }
            }
            self.read_nodes_ahead(hop.node, &next)?;
            for n in level {
                if self.arrive(hop, rest, start, &[n], row, trail, done)? {
                    return Ok(true);
                }
            }
            frontier = next;
        }
        Ok(false)
    }
}
