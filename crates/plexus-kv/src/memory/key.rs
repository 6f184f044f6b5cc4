//! The in-memory maps' key: short keys stored inside the B-tree's nodes.
//!
//! A `Vec<u8>` key lives on the heap, so every comparison on the way down
//! the tree follows a pointer to another cache line; a lookup among
//! millions of keys pays a cache miss per key compared. Plexus's keys are
//! mostly short (a node's 12 bytes, an adjacency block's 13), so a key of
//! up to [`INLINE`] bytes is kept in the node itself and a search reads
//! only the node's own memory.

use std::borrow::Borrow;
use std::cmp::Ordering;

/// The longest key stored inline: the whole value is then 32 bytes.
pub(super) const INLINE: usize = 30;

#[derive(Clone)]
pub(super) enum Key {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl Key {
    /// `b` as an inline key, to search the map with: compared word by word
    /// ([`Ord for Key`](Key::cmp)), where a search by `&[u8]` calls `memcmp`
    /// at every key it passes (a tenth of an in-memory LDBC read). `None`
    /// when `b` is too long to be inline.
    pub(super) fn inline(b: &[u8]) -> Option<Key> {
        let len = u8::try_from(b.len()).ok().filter(|_| b.len() <= INLINE)?;
        let mut bytes = [0; INLINE];
        bytes[..b.len()].copy_from_slice(b);
        Some(Key::Inline { len, bytes })
    }

    pub(super) fn as_slice(&self) -> &[u8] {
        match self {
            Key::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Key::Heap(b) => b,
        }
    }
}

impl From<Vec<u8>> for Key {
    fn from(v: Vec<u8>) -> Key {
        Key::inline(&v).unwrap_or_else(|| Key::Heap(v.into_boxed_slice()))
    }
}

/// The eight bytes of `b` from `at` (zeros past its end), as a number that
/// orders as they do.
fn word(b: &[u8; INLINE], at: usize) -> u64 {
    let mut w = [0; 8];
    let end = (at + 8).min(INLINE);
    w[..end - at].copy_from_slice(&b[at..end]);
    u64::from_be_bytes(w)
}

impl Borrow<[u8]> for Key {
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

// Equality and order are those of the bytes, as `Borrow` requires: a range
// given as byte slices must find the same keys as one given as `Key`s.
impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Key) -> Ordering {
        match (self, other) {
            // An inline key's bytes past its length are zeros, so the two
            // arrays compared word by word, then the lengths, order as the
            // bytes do: where the arrays first differ, either both hold a
            // key's byte there, or one key has ended (its zero) and the
            // other, holding a nonzero byte, is longer with it as a prefix;
            // equal arrays make the shorter key a prefix of the other.
            (Key::Inline { len: a, bytes: x }, Key::Inline { len: b, bytes: y }) => {
                for at in (0..INLINE).step_by(8) {
                    let (p, q) = (word(x, at), word(y, at));
                    if p != q {
                        return p.cmp(&q);
                    }
                }
                a.cmp(b)
            }
            _ => self.as_slice().cmp(other.as_slice()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn short_and_long_keys_keep_the_order_of_their_bytes() {
        let keys: Vec<Vec<u8>> = vec![
            vec![],
            vec![0],
            vec![0, 0],
            vec![1; INLINE],
            vec![1; INLINE + 1],
            vec![1, 2],
            vec![255; 40],
            vec![255; INLINE],
        ];
        let mut map: BTreeMap<Key, usize> = BTreeMap::new();
        for (i, k) in keys.iter().enumerate() {
            map.insert(Key::from(k.clone()), i);
        }
        let mut sorted = keys.clone();
        sorted.sort();
        let got: Vec<Vec<u8>> = map.keys().map(|k| k.as_slice().to_vec()).collect();
        assert_eq!(got, sorted);
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(map.get(k.as_slice()), Some(&i));
        }
        assert!(matches!(Key::from(vec![7; INLINE]), Key::Inline { .. }));
        assert!(matches!(Key::from(vec![7; INLINE + 1]), Key::Heap(_)));
        assert_eq!(std::mem::size_of::<Key>(), 32);
    }

    proptest::proptest! {
        /// Keys order as their bytes, inline or not (bytes from a small
        /// alphabet with zero, so that prefixes and padding meet).
        #[test]
        fn keys_compare_as_their_bytes(
            a in proptest::collection::vec(0u8..3, 0..40),
            b in proptest::collection::vec(0u8..3, 0..40),
        ) {
            let (x, y) = (Key::from(a.clone()), Key::from(b.clone()));
            proptest::prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            proptest::prop_assert_eq!(x == y, a == b);
            if let (Some(p), Some(q)) = (Key::inline(&a), Key::inline(&b)) {
                proptest::prop_assert_eq!(p.cmp(&q), a.cmp(&b));
            }
        }
    }
}
