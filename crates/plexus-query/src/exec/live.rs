//! Which variables of a row a later clause may still read.
//!
//! Rows are maps of names, and every match, expansion and sort buffer
//! clones the row it came from. A variable no later clause reads — the
//! list `collect()` built before an `UNWIND` walked it — would be copied
//! into every one of them: IC9 of LDBC carries 2,000 friends into each of
//! 20,000 message rows. The pipeline drops such variables where a row
//! enters a MATCH or an UNWIND (`pipeline.rs`). The test is conservative:
//! a variable stays whenever an expression might read it
//! (`eval::free_of`), and a `*` projection reads everything.

use crate::eval::free_of;
use plexus_cypher::{Clause, Expr, NodePattern, PathPattern, Projection, RelPattern};

/// Whether `var` may be read by any of `clauses`, in order: a projection
/// (WITH or RETURN) ends the scope, so nothing after it can read the
/// variable unless the projection passes it on, which reads it.
pub(super) fn read_by<'c>(clauses: impl IntoIterator<Item = &'c Clause>, var: &str) -> bool {
    for c in clauses {
        match c {
            Clause::Unwind { expr, .. } => {
                if !free_of(expr, var) {
                    return true;
                }
            }
            Clause::Match {
                patterns, where_, ..
            } => {
                if !opt_free(where_.as_ref(), var) || patterns.iter().any(|p| !path_free(p, var)) {
                    return true;
                }
            }
            Clause::With(p) | Clause::Return(p) => return !projection_free(p, var),
            // Any other clause: assume it reads everything.
            _ => return true,
        }
    }
    false
}

fn opt_free(e: Option<&Expr>, var: &str) -> bool {
    e.is_none_or(|e| free_of(e, var))
}

fn projection_free(p: &Projection, var: &str) -> bool {
    !p.star
        && p.items.iter().all(|i| free_of(&i.expr, var))
        && p.order_by.iter().all(|s| free_of(&s.expr, var))
        && opt_free(p.where_.as_ref(), var)
        && opt_free(p.skip.as_ref(), var)
        && opt_free(p.limit.as_ref(), var)
}

fn node_free(n: &NodePattern, var: &str) -> bool {
    n.var.as_deref() != Some(var)
        && opt_free(n.props.as_deref(), var)
        && opt_free(n.where_.as_deref(), var)
}

fn rel_free(r: &RelPattern, var: &str) -> bool {
    r.var.as_deref() != Some(var)
        && opt_free(r.props.as_deref(), var)
        && opt_free(r.where_.as_deref(), var)
}

/// A pattern reads a variable it names (a bound one is its start or a
/// constraint) or one its property maps and inline WHEREs read.
fn path_free(p: &PathPattern, var: &str) -> bool {
    p.var.as_deref() != Some(var)
        && node_free(&p.element.start, var)
        && p.element
            .chain
            .iter()
            .all(|(r, n)| rel_free(r, var) && node_free(n, var))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clauses(q: &str) -> Vec<Clause> {
        plexus_cypher::parse(q).unwrap().first.clauses
    }

    #[test]
    fn a_walked_list_is_dead_after_its_unwind() {
        let c = clauses(
            "WITH [1] AS friends UNWIND friends AS friend \
             MATCH (friend)<-[:C]-(m) WHERE m.d < $x RETURN friend.id, m.id ORDER BY m.id",
        );
        // After the UNWIND (clause 1), only `friend` and `m` are read.
        assert!(!read_by(&c[2..], "friends"));
        assert!(read_by(&c[2..], "friend"));
        // The UNWIND itself reads the list.
        assert!(read_by(&c[1..], "friends"));
        // Counting rows reads none of them (LDBC IC6 counted through
        // 1,938 copies of the list it had walked).
        let c = clauses("WITH [1] AS friends UNWIND friends AS f MATCH (f)<--(m) RETURN count(*)");
        assert!(!read_by(&c[2..], "friends"));
    }

    #[test]
    fn projections_end_the_scope_and_a_star_reads_everything() {
        let c = clauses("MATCH (a)-->(b) WITH a RETURN a");
        assert!(!read_by(&c[1..], "b"));
        let c = clauses("MATCH (a)-->(b) WITH * RETURN a");
        assert!(read_by(&c[1..], "b"));
        let c = clauses("MATCH (a)-->(b) WITH a ORDER BY b.x LIMIT 1 RETURN a");
        assert!(read_by(&c[1..], "b"));
    }

    #[test]
    fn patterns_read_their_variables_and_their_maps() {
        let c = clauses("MATCH (a) MATCH (b {k: x}) RETURN b");
        assert!(read_by(&c[1..], "x"));
        let c = clauses("MATCH (a) MATCH p = (b)-[r]->(c) RETURN 1");
        for v in ["p", "b", "r", "c"] {
            assert!(read_by(&c[1..], v), "{v}");
        }
        assert!(!read_by(&c[1..], "a"));
        // What free_of cannot see into is read, to be safe.
        let c = clauses("MATCH (a) RETURN [x IN [1] | x] AS l");
        assert!(read_by(&c[1..], "a"));
    }
}
