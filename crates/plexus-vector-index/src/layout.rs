//! The entries a vector index keeps under its prefix of storage's
//! `index_data` keyspace:
//!
//! * `v | node (u64 BE)` → `slot (u32 LE) | code`: the node's vector as the
//!   index holds it (prepared, in the index's precision), and its slot.
//!   Written in the same transaction as the node: the index's truth.
//! * `w | slot (u32 BE)` → `code`: a slot whose node got another vector or
//!   lost it. It stays in the graph as a waypoint, so its vector is kept.
//! * `l | slot (u32 BE)` → links (layer count, then per layer a count and
//!   the linked slots): a checkpoint of the graph, so that opening does not
//!   link everything again. Only slots linked when it was written have one;
//!   the others are linked at load.

use crate::error::VectorIndexError;

pub const VECTOR: u8 = b'v';
pub const WAYPOINT: u8 = b'w';
pub const LINKS: u8 = b'l';

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

pub fn vector_value(slot: u32, code: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + code.len());
    v.extend_from_slice(&slot.to_le_bytes());
    v.extend_from_slice(code);
    v
}

fn corrupt(what: &str) -> VectorIndexError {
    VectorIndexError::Corrupt(what.into())
}

/// The slot and code of a `v` entry.
pub fn read_vector_value(v: &[u8]) -> Result<(u32, &[u8]), VectorIndexError> {
    match v.split_first_chunk::<4>() {
        Some((slot, code)) => Ok((u32::from_le_bytes(*slot), code)),
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
        [tag @ (WAYPOINT | LINKS), rest @ ..] => rest
            .try_into()
            .map(|b| (*tag, u64::from(u32::from_be_bytes(b))))
            .map_err(|_| corrupt("slot key")),
        _ => Err(corrupt("unknown entry")),
    }
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
        assert!(read_key(b"x").is_err());
        assert!(read_key(&[VECTOR, 1]).is_err());
        let v = vector_value(5, &[1, 2]);
        assert_eq!(read_vector_value(&v).unwrap(), (5, &[1u8, 2][..]));
        assert!(read_vector_value(&[1]).is_err());
    }
}
