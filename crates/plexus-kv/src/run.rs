//! A run of key-value pairs kept in one flat buffer, for bulk loads.
//!
//! A bulk load builds millions of small keys. Held as a `Vec<u8>` each, they
//! cost an allocation to build, a pointer chase per comparison while
//! sorting and a free each at the end — together most of a load's time.
//! A [`Run`] appends every pair to one buffer and sorts small fixed-size
//! entries instead: each carries the 16 bytes that follow the prefix all
//! keys share (a graph id, say) as one integer, so most comparisons are an
//! integer compare and touch no key bytes at all.

use crate::{KvError, Result};
use std::cmp::Ordering;

/// Where one pair lies in the buffer, with its sort prefix.
#[derive(Clone, Copy)]
struct Entry {
    /// Key bytes `[shared..shared + 16]`, big-endian, zero-padded: ordered
    /// as those bytes are, or tied.
    prefix: u128,
    /// The block (high 32 bits) and the offset in it (low 32 bits).
    at: u64,
    key_len: u32,
    value_len: u32,
}

/// Pairs go into blocks of this size (a larger pair gets a block of its
/// own): a growing run never copies what it holds, as one doubling
/// buffer would, touching fresh memory twice over.
const BLOCK: usize = 4 << 20;

/// Key-value pairs in a few large blocks, pushed in any order and sorted
/// by key.
#[derive(Default)]
pub struct Run {
    blocks: Vec<Vec<u8>>,
    entries: Vec<Entry>,
    sorted: bool,
}

impl Run {
    pub fn new() -> Run {
        Run::default()
    }

    /// Appends a pair.
    pub fn push(&mut self, key: &[u8], value: &[u8]) {
        self.push_parts(&[key], value);
    }

    /// Appends a pair whose key is the concatenation of `key_parts`, without
    /// building it first.
    pub fn push_parts(&mut self, key_parts: &[&[u8]], value: &[u8]) {
        let key_len: usize = key_parts.iter().map(|p| p.len()).sum();
        let (at, block) = room(&mut self.blocks, key_len + value.len());
        for p in key_parts {
            block.extend_from_slice(p);
        }
        block.extend_from_slice(value);
        self.entries.push(Entry {
            prefix: 0,
            at,
            key_len: key_len as u32,
            value_len: value.len() as u32,
        });
        self.sorted = false;
    }

    /// Makes room for `pairs` more pairs (their entries; pair bytes go
    /// into blocks as they come).
    pub fn reserve(&mut self, pairs: usize) {
        self.entries.reserve(pairs);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn key_of(&self, e: &Entry) -> &[u8] {
        key_in(&self.blocks, e)
    }

    fn pair_of(&self, e: &Entry) -> (&[u8], &[u8]) {
        let block = &self.blocks[(e.at >> 32) as usize];
        let o = e.at as u32 as usize;
        let k = o + e.key_len as usize;
        (&block[o..k], &block[k..k + e.value_len as usize])
    }

    /// The `i`-th pair (in key order once sorted).
    pub fn get(&self, i: usize) -> (&[u8], &[u8]) {
        self.pair_of(&self.entries[i])
    }

    /// The pairs, in key order once sorted.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.entries.iter().map(|e| self.pair_of(e))
    }

    /// Sorts the pairs by key (pairs with equal keys keep no particular order).
    pub fn sort(&mut self) {
        if self.sorted {
            return;
        }
        if self.entries.windows(2).all(|w| {
            let (a, b) = (self.key_of(&w[0]), self.key_of(&w[1]));
            a <= b
        }) {
            self.sorted = true;
            return;
        }
        // The prefix every key shares adds nothing to a comparison: the
        // integer prefix starts after it.
        let first = self.key_of(&self.entries[0]).to_vec();
        let shared = self.entries.iter().fold(first.len(), |n, e| {
            let k = self.key_of(e);
            k.iter()
                .zip(&first[..n])
                .take_while(|(a, b)| a == b)
                .count()
        });
        let blocks = &self.blocks;
        for e in &mut self.entries {
            let key = &key_in(blocks, e)[shared..];
            let mut b = [0u8; 16];
            let n = key.len().min(16);
            b[..n].copy_from_slice(&key[..n]);
            e.prefix = u128::from_be_bytes(b);
        }
        let rest = |e: &Entry| {
            let k = key_in(blocks, e);
            &k[(shared + 16).min(k.len())..]
        };
        let cmp = |a: &Entry, b: &Entry| -> Ordering {
            // Equal prefixes: either key may end inside them (then the
            // shorter sorts first, as zero padding ties with real zeros).
            a.prefix
                .cmp(&b.prefix)
                .then_with(|| rest(a).cmp(rest(b)))
                .then_with(|| a.key_len.cmp(&b.key_len))
        };
        self.entries.sort_unstable_by(cmp);
        self.compact();
        self.sorted = true;
    }

    /// Copies the pairs into new blocks in key order. After a sort they lie
    /// scattered: every later pass over them (the backend's write, counting
    /// degrees) would miss the cache at each pair, one miss at a time, while
    /// this copy's independent reads overlap.
    fn compact(&mut self) {
        let total: usize = self.blocks.iter().map(Vec::len).sum();
        let mut blocks: Vec<Vec<u8>> = Vec::with_capacity(total / BLOCK + 1);
        for e in &mut self.entries {
            let o = e.at as u32 as usize;
            let need = (e.key_len + e.value_len) as usize;
            let pair = &self.blocks[(e.at >> 32) as usize][o..o + need];
            let (at, block) = room(&mut blocks, need);
            e.at = at;
            block.extend_from_slice(pair);
        }
        self.blocks = blocks;
    }

    /// Fails unless the keys are strictly ascending (sorted, no duplicates).
    pub fn check_sorted(&self) -> Result<()> {
        let ascending = self
            .entries
            .windows(2)
            .all(|w| self.key_of(&w[0]) < self.key_of(&w[1]));
        if ascending {
            Ok(())
        } else {
            Err(KvError::NotSorted)
        }
    }

    /// The first pair of each group of equal keys that has more than one:
    /// sorted runs must not hold duplicates, and callers name the clash.
    pub fn first_duplicate(&self) -> Option<usize> {
        self.entries
            .windows(2)
            .position(|w| self.key_of(&w[0]) == self.key_of(&w[1]))
    }
}

/// The last block, or a new one when `need` more bytes do not fit it,
/// and where those bytes will start (block and offset, as `Entry::at`).
fn room(blocks: &mut Vec<Vec<u8>>, need: usize) -> (u64, &mut Vec<u8>) {
    if blocks.last().is_none_or(|b| b.capacity() - b.len() < need) {
        blocks.push(Vec::with_capacity(need.max(BLOCK)));
    }
    let index = blocks.len() - 1;
    let block = &mut blocks[index];
    (((index as u64) << 32) | block.len() as u64, block)
}

fn key_in<'a>(blocks: &'a [Vec<u8>], e: &Entry) -> &'a [u8] {
    let o = e.at as u32 as usize;
    &blocks[(e.at >> 32) as usize][o..o + e.key_len as usize]
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Run({} pairs)", self.entries.len())
    }
}

impl FromIterator<(Vec<u8>, Vec<u8>)> for Run {
    fn from_iter<I: IntoIterator<Item = (Vec<u8>, Vec<u8>)>>(pairs: I) -> Run {
        let mut run = Run::new();
        for (k, v) in pairs {
            run.push(&k, &v);
        }
        run
    }
}

#[cfg(test)]
mod tests {
    use super::Run;

    /// Pseudo-random keys of assorted lengths sharing assorted prefixes:
    /// the run sorts them as a plain sort of the byte strings does.
    #[test]
    fn sorts_as_bytes_do() {
        let mut x = 0x2545F4914F6CDD1Du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for shared in [0usize, 3, 4, 20] {
            let mut keys: Vec<Vec<u8>> = (0..2000)
                .map(|_| {
                    let len = (next() % 30) as usize;
                    let mut k = vec![7u8; shared];
                    k.extend((0..len).map(|_| (next() % 3) as u8));
                    k
                })
                .collect();
            let mut run = Run::new();
            for (i, k) in keys.iter().enumerate() {
                run.push(k, &(i as u32).to_be_bytes());
            }
            run.sort();
            keys.sort();
            let got: Vec<Vec<u8>> = run.iter().map(|(k, _)| k.to_vec()).collect();
            assert_eq!(got, keys, "shared prefix {shared}");
            // Values travel with their keys.
            for (k, v) in run.iter() {
                let i = u32::from_be_bytes(v.try_into().unwrap()) as usize;
                assert!(keys.binary_search(&k.to_vec()).is_ok());
                assert!(i < 2000);
            }
            assert_eq!(run.check_sorted().is_ok(), run.first_duplicate().is_none());
        }
    }

    #[test]
    fn parts_make_one_key() {
        let mut run = Run::new();
        run.push_parts(&[b"ab", b"c"], b"v");
        run.push(b"abb", b"");
        run.sort();
        assert_eq!(run.get(0), (&b"abb"[..], &b""[..]));
        assert_eq!(run.get(1), (&b"abc"[..], &b"v"[..]));
        assert!(run.check_sorted().is_ok());
    }
}
