//! Exact search: every slot measured. Chosen where a graph does not pay
//! (few vectors, or a filter few pass) and as the reference recall is
//! measured against.

use crate::hnsw::Near;
use crate::metric::Codes;
use std::collections::BinaryHeap;

/// The `k` closest slots that `accept` passes, closest first.
pub(crate) fn top_k(codes: &Codes, q: &[f32], k: usize, accept: &dyn Fn(u32) -> bool) -> Vec<Near> {
    top_k_of(codes, q, k, (0..codes.len() as u32).filter(|s| accept(*s)))
}

/// The `k` closest of `slots`, closest first.
pub(crate) fn top_k_of(
    codes: &Codes,
    q: &[f32],
    k: usize,
    slots: impl Iterator<Item = u32>,
) -> Vec<Near> {
    if k == 0 {
        return Vec::new();
    }
    let mut heap: BinaryHeap<Near> = BinaryHeap::with_capacity(k + 1);
    for slot in slots {
        let d = codes.distance(q, slot);
        if heap.len() < k {
            heap.push(Near { d, slot });
        } else if heap.peek().is_some_and(|w| d < w.d) {
            heap.pop();
            heap.push(Near { d, slot });
        }
    }
    heap.into_sorted_vec()
}
