//! ORDER BY … LIMIT without aggregation or DISTINCT: only the best
//! `skip + limit` rows are kept while rows arrive (a heap whose top is the
//! worst kept), and a row is projected only once it is known to stay.
//!
//! A top-k read such as LDBC's IC2 matches thousands of messages and
//! returns twenty: projecting every match read six properties of each,
//! where the sort needs two. Ties keep arrival order, as the full stable
//! sort does: a row's arrival number is its last key. A row's keys are
//! evaluated one at a time, and the first ones may already rank it below
//! the worst kept row (IC9 then reads no `message.id` but on a tie).

use super::compare_keys;
use crate::eval::Row;
use plexus_common::Value;
use plexus_cypher::SortItem;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A row that may be among the best: its sort keys, its arrival number,
/// the values of the items its keys read, and the part of its input row
/// the projection reads.
pub(super) struct Ranked<'p> {
    by: &'p [SortItem],
    pub(super) keys: Vec<Value>,
    seq: u64,
    pub(super) items: Vec<Value>,
    pub(super) input: Row,
}

impl Ord for Ranked<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_keys(self.by, &self.keys, &other.keys).then(self.seq.cmp(&other.seq))
    }
}

impl PartialOrd for Ranked<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked<'_> {}

/// The best `cap` rows seen so far.
pub(super) struct TopN<'p> {
    by: &'p [SortItem],
    cap: usize,
    seq: u64,
    heap: BinaryHeap<Ranked<'p>>,
}

impl<'p> TopN<'p> {
    pub(super) fn new(by: &'p [SortItem], cap: usize) -> TopN<'p> {
        TopN {
            by,
            cap,
            seq: 0,
            heap: BinaryHeap::new(),
        }
    }

    /// Whether a row with these keys would be kept (arriving now, it loses
    /// every tie).
    pub(super) fn wants(&self, keys: &[Value]) -> bool {
        if self.heap.len() < self.cap {
            return true;
        }
        self.heap
            .peek()
            .is_some_and(|worst| compare_keys(self.by, keys, &worst.keys) == Ordering::Less)
    }

    /// Whether a row whose first keys are `prefix` is certainly not kept:
    /// they rank it below the worst kept row, whatever its other keys.
    pub(super) fn loses(&self, prefix: &[Value]) -> bool {
        if self.heap.len() < self.cap {
            return false;
        }
        self.heap.peek().is_some_and(|worst| {
            let by = &self.by[..prefix.len().min(self.by.len())];
            compare_keys(by, prefix, &worst.keys) == Ordering::Greater
        })
    }

    /// A row as the heap keeps it, numbered in arrival order.
    pub(super) fn rank(&mut self, keys: Vec<Value>, items: Vec<Value>, input: Row) -> Ranked<'p> {
        self.seq += 1;
        Ranked {
            by: self.by,
            keys,
            seq: self.seq,
            items,
            input,
        }
    }

    /// Keeps a row [`wants`](Self::wants) accepted; returns the row it
    /// pushed out, if any.
    pub(super) fn push(&mut self, ranked: Ranked<'p>) -> Option<Ranked<'p>> {
        self.heap.push(ranked);
        (self.heap.len() > self.cap)
            .then(|| self.heap.pop())
            .flatten()
    }

    /// The kept rows, best first.
    pub(super) fn into_sorted(self) -> Vec<Ranked<'p>> {
        self.heap.into_sorted_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_cypher::{Expr, ExprKind, Span};

    fn by(descending: bool) -> Vec<SortItem> {
        vec![SortItem {
            expr: Expr {
                kind: ExprKind::Null,
                span: Span::default(),
            },
            descending,
        }]
    }

    /// Keeps what a stable full sort's first `cap` rows are, ties in
    /// arrival order.
    fn top(values: &[i64], descending: bool, cap: usize) -> Vec<(i64, i64)> {
        let by = by(descending);
        let mut t = TopN::new(&by, cap);
        for (i, v) in values.iter().enumerate() {
            let keys = vec![Value::Int(*v)];
            // A row the first keys rank below the worst kept is not wanted.
            assert!(!t.loses(&keys) || !t.wants(&keys));
            if t.wants(&keys) {
                let mut row = Row::new();
                row.insert("i", Value::Int(i as i64));
                let ranked = t.rank(keys, vec![], row);
                t.push(ranked);
            }
        }
        t.into_sorted()
            .into_iter()
            .map(|r| match (&r.keys[0], &r.input["i"]) {
                (Value::Int(k), Value::Int(i)) => (*k, *i),
                _ => unreachable!(),
            })
            .collect()
    }

    proptest::proptest! {
        /// Two keys, the second looked at only when the first does not
        /// already lose: the same rows as a stable sort of both keys.
        #[test]
        fn a_row_dropped_on_its_first_key_is_one_a_full_sort_drops(
            rows in proptest::collection::vec((0i64..4, 0i64..4), 0..40),
            cap in 0usize..8,
            descending in proptest::bool::ANY,
        ) {
            let mut keys_by = by(descending);
            keys_by.extend(by(false));
            let mut t = TopN::new(&keys_by, cap);
            for (i, (a, b)) in rows.iter().enumerate() {
                let mut keys = vec![Value::Int(*a)];
                if t.loses(&keys) {
                    continue;
                }
                keys.push(Value::Int(*b));
                if t.wants(&keys) {
                    let mut row = Row::new();
                    row.insert("i", Value::Int(i as i64));
                    let ranked = t.rank(keys, vec![], row);
                    t.push(ranked);
                }
            }
            let kept: Vec<i64> = t
                .into_sorted()
                .into_iter()
                .map(|r| match &r.input["i"] {
                    Value::Int(i) => *i,
                    _ => unreachable!(),
                })
                .collect();
            let mut all: Vec<(usize, &(i64, i64))> = rows.iter().enumerate().collect();
            all.sort_by(|x, y| {
                let first = x.1 .0.cmp(&y.1 .0);
                let first = if descending { first.reverse() } else { first };
                first.then(x.1 .1.cmp(&y.1 .1))
            });
            let want: Vec<i64> = all.iter().take(cap).map(|(i, _)| *i as i64).collect();
            proptest::prop_assert_eq!(kept, want);
        }
    }

    #[test]
    fn the_best_rows_in_order_with_ties_in_arrival_order() {
        let values = [5, 1, 4, 1, 5, 9, 2, 6, 5, 3];
        assert_eq!(top(&values, false, 3), vec![(1, 1), (1, 3), (2, 6)]);
        assert_eq!(top(&values, true, 4), vec![(9, 5), (6, 7), (5, 0), (5, 4)]);
        assert_eq!(top(&values, false, 0), vec![]);
        // Against a stable sort, for every cap.
        for cap in 0..=values.len() + 1 {
            let mut all: Vec<(i64, i64)> = values
                .iter()
                .enumerate()
                .map(|(i, v)| (*v, i as i64))
                .collect();
            all.sort_by_key(|(v, _)| *v);
            all.truncate(cap);
            assert_eq!(top(&values, false, cap), all, "cap {cap}");
        }
    }
}
