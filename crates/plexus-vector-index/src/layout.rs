//! The entries a vector index keeps under its prefix of storage's
//! `index_data` keyspace:
//!
//! * `v | node (u64 BE)` → `slot (u32 LE)`: the slot of the node's vector.
//!   Written in the same transaction as the node: the index's truth.
//! * `c | slot (u32 BE)` → `code`: one slot's vector as the index holds it
//!   (prepared, in the index's precision), written by the transaction that
//!   gave the slot its vector. A slot's vector never changes (a new vector
//!   takes a new slot), so nobody writes the entry again.
//! * `b | first slot (u32 BE)` → a block of the codes of consecutive slots
//!   (`block_value`). A code of a thousand f16 components is 2 KiB, too
//!   big for a B-tree leaf page: alone, LMDB gives it a 4 KiB page of its
//!   own. A block of 31 fills 16 pages to within 3%. A transaction that
//!   fills a whole block writes it at once; a checkpoint gathers `c`
//!   entries into their blocks later.
//! * `l | slot (u32 BE)` → links (layer count, then per layer a count and
//!   the linked slots): a checkpoint of the graph, so that opening does not
//!   link everything again. Only slots linked when it was written have one;
//!   the others are linked at load.
//!
//! A slot with a code that no `v` entry names is a waypoint: its node got
//! another vector or lost it, and it stays in the graph for searches to
//! pass through.
//!
//! The first layout (before any release) kept the code in the `v` entry
//! after the slot, and a replaced one under `w | slot`: both are still read.

use crate::error::VectorIndexError;

pub const BLOCK: u8 = b'b';
pub const CODE: u8 = b'c';
pub const LINKS: u8 = b'l';
pub const VECTOR: u8 = b'v';
/// The first layout's waypoint codes (read, never written).
pub const WAYPOINT: u8 = b'w';

/// The block value's target: 16 pages of LMDB's 4 KiB (other backends do
/// not care), less the first page's header and some room.
const BLOCK_TARGET: usize = 16 * 4096 - 64;

pub fn vector_key(node: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(9);
    k.push(VECTOR);
    k.extend_from_slice(&node.to_be_bytes());
    k
}

pub fn slot_key(tag: u8, slot: u32) -> Vec<u8> {
    let mut k = Vec::with_capacity(5);
    k.push(tag);
    k.extend_from_slice(&slot.to_be_bytes());
    k
}

fn corrupt(what: &str) -> VectorIndexError {
    VectorIndexError::Corrupt(what.into())
}

/// The slot of a `v` entry, and the code the first layout kept after it.
pub fn read_vector_value(v: &[u8]) -> Result<(u32, Option<&[u8]>), VectorIndexError> {
    match v.split_first_chunk::<4>() {
        Some((slot, [])) => Ok((u32::from_le_bytes(*slot), None)),
        Some((slot, code)) => Ok((u32::from_le_bytes(*slot), Some(code))),
        None => Err(corrupt("short vector entry")),
    }
}

/// The number after the tag of a `v` or slot key.
pub fn read_key(k: &[u8]) -> Result<(u8, u64), VectorIndexError> {
    match k {
        [VECTOR, rest @ ..] => rest
            .try_into()
            .map(|b| (VECTOR, u64::from_be_bytes(b)))
            .map_err(|_| corrupt("vector key")),
        [tag @ (BLOCK | CODE | LINKS | WAYPOINT), rest @ ..] => rest
            .try_into()
            .map(|b| (*tag, u64::from(u32::from_be_bytes(b))))
            .map_err(|_| corrupt("slot key")),
        _ => Err(corrupt("unknown entry")),
    }
}

/// Slots per block for codes of `code_bytes`: as many as the target holds
/// (at least one, at most 4,096).
pub fn block_slots(code_bytes: usize) -> u32 {
    let fits = |n: usize| 2 + n.div_ceil(8) + n * code_bytes <= BLOCK_TARGET;
    let mut n = (BLOCK_TARGET / code_bytes.max(1)).clamp(1, 4096);
    while n > 1 && !fits(n) {
        n -= 1;
    }
    n as u32
}

/// The first slot of the block holding `slot`.
pub fn block_of(slot: u32, per_block: u32) -> u32 {
    slot - slot % per_block
}

/// A block: the number of slots it spans (u16 LE), a bitmap of those
/// holding a code (bit i of byte i / 8 for slot first + i), then the codes
/// of those, in slot order. `codes` gives them as (offset from the first
/// slot, code), offsets increasing.
pub fn block_value<'a>(span: u16, codes: impl Iterator<Item = (u16, &'a [u8])>) -> Vec<u8> {
    let map = usize::from(span).div_ceil(8);
    let mut out = Vec::new();
    out.extend_from_slice(&span.to_le_bytes());
    out.resize(2 + map, 0);
    for (i, code) in codes {
        out[2 + usize::from(i) / 8] |= 1 << (i % 8);
        out.extend_from_slice(code);
    }
    out
}

/// The (offset, code) pairs of a block whose codes are `code_bytes` long.
pub fn read_block(v: &[u8], code_bytes: usize) -> Result<Vec<(u16, &[u8])>, VectorIndexError> {
    let (span, rest) = v
        .split_first_chunk::<2>()
        .ok_or_else(|| corrupt("short block"))?;
    let span = u16::from_le_bytes(*span);
    let (map, mut codes) = rest
        .split_at_checked(usize::from(span).div_ceil(8))
        .ok_or_else(|| corrupt("block bitmap cut short"))?;
    let mut out = Vec::new();
    for i in (0..span).filter(|i| map[usize::from(*i) / 8] & (1 << (i % 8)) != 0) {
        let (code, after) = codes
            .split_at_checked(code_bytes)
            .ok_or_else(|| corrupt("block cut short"))?;
        out.push((i, code));
        codes = after;
    }
    if !codes.is_empty() {
        return Err(corrupt("block longer than its bitmap says"));
    }
    Ok(out)
}

pub fn encode_links(layers: &[Vec<u32>]) -> Vec<u8> {
    let mut out = vec![layers.len() as u8];
    for l in layers {
        out.extend_from_slice(&(l.len() as u16).to_le_bytes());
        for s in l {
            out.extend_from_slice(&s.to_le_bytes());
        }
    }
    out
}

pub fn decode_links(b: &[u8]) -> Result<Vec<Vec<u32>>, VectorIndexError> {
    let (&n, mut rest) = b.split_first().ok_or_else(|| corrupt("empty links"))?;
    let mut layers = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (count, after) = rest
            .split_first_chunk::<2>()
            .ok_or_else(|| corrupt("links cut short"))?;
        let count = u16::from_le_bytes(*count) as usize;
        let bytes = after
            .get(..count * 4)
            .ok_or_else(|| corrupt("links cut short"))?;
        layers.push(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        );
        rest = &after[count * 4..];
    }
    Ok(layers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip() {
        let layers = vec![vec![1, 2, 3], vec![], vec![9]];
        assert_eq!(decode_links(&encode_links(&layers)).unwrap(), layers);
        assert!(decode_links(&encode_links(&layers)[..5]).is_err());
        assert!(decode_links(&[]).is_err());
        assert_eq!(read_key(&vector_key(7)).unwrap(), (VECTOR, 7));
        assert_eq!(read_key(&slot_key(LINKS, 3)).unwrap(), (LINKS, 3));
        assert_eq!(read_key(&slot_key(BLOCK, 62)).unwrap(), (BLOCK, 62));
        assert!(read_key(b"x").is_err());
        assert!(read_key(&[VECTOR, 1]).is_err());
        assert_eq!(read_vector_value(&5u32.to_le_bytes()).unwrap(), (5, None));
        let old = [5, 0, 0, 0, 1, 2];
        assert_eq!(read_vector_value(&old).unwrap(), (5, Some(&[1u8, 2][..])));
        assert!(read_vector_value(&[1]).is_err());
    }

    #[test]
    fn blocks_fill_their_pages() {
        // 1,024 f16 components: 31 codes in 16 pages of 4 KiB.
        assert_eq!(block_slots(2048), 31);
        for code in [1, 4, 256, 2048, 4096, 16384, 100_000] {
            let n = block_slots(code) as usize;
            assert!((1..=4096).contains(&n));
            assert!(
                n == 1 || 2 + n.div_ceil(8) + n * code <= BLOCK_TARGET,
                "{code}"
            );
            assert!(2 + (n + 1).div_ceil(8) + (n + 1) * code > BLOCK_TARGET || n == 4096);
        }
        assert_eq!(block_of(65, 31), 62);
    }

    #[test]
    fn blocks_round_trip() {
        let a = [1u8, 2, 3];
        let b = [4u8, 5, 6];
        let v = block_value(10, [(0u16, &a[..]), (9, &b[..])].into_iter());
        assert_eq!(v.len(), 2 + 2 + 6);
        assert_eq!(read_block(&v, 3).unwrap(), vec![(0, &a[..]), (9, &b[..])]);
        // Damage of every kind is an error, never a panic.
        for cut in 0..v.len() {
            assert!(read_block(&v[..cut], 3).is_err(), "{cut}");
        }
        let mut longer = v.clone();
        longer.push(0);
        assert!(read_block(&longer, 3).is_err());
        assert!(read_block(&block_value(0, std::iter::empty()), 3)
            .unwrap()
            .is_empty());
    }
}
