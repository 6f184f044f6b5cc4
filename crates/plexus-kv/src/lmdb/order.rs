//! The order of keys in every LMDB database of a store: LMDB's own
//! (bytes compared as unsigned, a shorter key before the longer one it
//! begins), computed eight bytes at a time.
//!
//! Why: LMDB's default comparator calls `memcmp` for every probe of a
//! page's binary search, and every put of a large commit searches its page.
//! A store's keys share long prefixes (a graph, a tag, an entity id), so
//! most probes compare a dozen bytes or more; two big-endian words decide
//! as `memcmp` would, without its call and its dispatch on the length
//! (writes of a 7,000-version commit about 7% faster; a point read, bound
//! by the cache misses of its descent, no faster: ARCHITECTURE.md). The
//! order is exactly LMDB's, so stores written before read the same, and
//! tools that open a store without it (`mdb_stat`, `mdb_dump`) still walk
//! it in order.

use std::cmp::Ordering;

/// Lexicographic byte order, as LMDB's default comparator.
pub(crate) enum KeyOrder {}

impl heed::Comparator for KeyOrder {
    fn compare(a: &[u8], b: &[u8]) -> Ordering {
        compare(a, b)
    }
}

/// `a.cmp(b)` for byte slices, a word at a time.
#[inline]
pub(crate) fn compare(a: &[u8], b: &[u8]) -> Ordering {
    let (mut x, mut y) = (a, b);
    while let (Some((xw, xr)), Some((yw, yr))) =
        (x.split_first_chunk::<8>(), y.split_first_chunk::<8>())
    {
        if xw != yw {
            return u64::from_be_bytes(*xw).cmp(&u64::from_be_bytes(*yw));
        }
        (x, y) = (xr, yr);
    }
    // Fewer than eight bytes left on one side: their common length `m`
    // read the same way on both sides, then the shorter key first.
    let m = x.len().min(y.len());
    tail(x, m).cmp(&tail(y, m)).then(x.len().cmp(&y.len()))
}

/// The first `m` (< 8) bytes of `s` as a number that orders as they do:
/// two overlapping loads (the same overlap on both sides compared, so
/// equal heads leave the tails to decide), no call to `memcpy`.
#[inline]
fn tail(s: &[u8], m: usize) -> u64 {
    let s = s.get(..m).unwrap_or(s);
    let w4 = |c: Option<&[u8; 4]>| u64::from(c.map_or(0, |c| u32::from_be_bytes(*c)));
    let w2 = |c: Option<&[u8; 2]>| u64::from(c.map_or(0, |c| u16::from_be_bytes(*c)));
    match m {
        4.. => w4(s.first_chunk()) << 32 | w4(s.last_chunk()),
        2.. => w2(s.first_chunk()) << 16 | w2(s.last_chunk()),
        _ => s.first().map_or(0, |&c| u64::from(c)),
    }
}

#[cfg(test)]
mod tests {
    use super::compare;
    use proptest::prelude::*;
    use std::cmp::Ordering;

    proptest! {
        #[test]
        fn orders_as_bytes_do(
            a in prop::collection::vec(any::<u8>(), 0..40),
            b in prop::collection::vec(any::<u8>(), 0..40),
            shared in prop::collection::vec(0u8..3, 0..24),
        ) {
            prop_assert_eq!(compare(&a, &b), a.cmp(&b));
            // Long shared prefixes, as a store's keys have.
            let (x, y) = ([&shared[..], &a].concat(), [&shared[..], &b].concat());
            prop_assert_eq!(compare(&x, &y), x.cmp(&y));
            prop_assert_eq!(compare(&x, &x), Ordering::Equal);
        }
    }
}
