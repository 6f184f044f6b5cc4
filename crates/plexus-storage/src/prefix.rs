//! Byte strings stored after the one before them: how many leading bytes
//! they share with it, then the rest. User ids in a block are mostly
//! alike (`e1234560`, `e1234561`), so each costs a byte or two.
//!
//! One byte holds (shared, suffix length) as two nibbles when the shared
//! part is under 15 and the suffix under 16 bytes; otherwise 0xFF, then
//! both as varints. The suffix follows.

use plexus_common::{write_varint, DecodeError, Reader};

/// Appends `key` stored after `prev`, and makes `prev` that key.
pub(crate) fn push(out: &mut Vec<u8>, prev: &mut Vec<u8>, key: &[u8]) {
    let shared = prev.iter().zip(key).take_while(|(a, b)| a == b).count();
    let suffix = &key[shared..];
    if shared < 15 && suffix.len() < 16 {
        out.push(((shared << 4) | suffix.len()) as u8);
    } else {
        out.push(0xFF);
        write_varint(out, shared as u64);
        write_varint(out, suffix.len() as u64);
    }
    out.extend_from_slice(suffix);
    prev.truncate(shared);
    prev.extend_from_slice(suffix);
}

/// Reads one stored key: the bytes it shares with the key before it, and
/// the rest of it.
pub(crate) fn read<'a>(r: &mut Reader<'a>) -> Result<(usize, &'a [u8]), DecodeError> {
    let h = r.byte()?;
    let (shared, len) = if h == 0xFF {
        let shared = usize::try_from(r.varint()?).unwrap_or(usize::MAX);
        (shared, r.len()?)
    } else {
        (usize::from(h >> 4), usize::from(h & 15))
    };
    Ok((shared, r.bytes(len)?))
}

/// Reads the key stored after `cur` into `cur`. With `ascending`, fails
/// unless the key is above the one before it (sorted blocks).
pub(crate) fn next(
    r: &mut Reader<'_>,
    cur: &mut Vec<u8>,
    ascending: bool,
) -> Result<(), DecodeError> {
    next_after(r, cur, 0, ascending).map(|_| ())
}

/// [`next`] for keys stored after the first `base` bytes of `cur` (a
/// block's keys without the graph, kept whole in `cur`). Returns how many
/// leading bytes of `cur` the new key kept (`base` counted).
pub(crate) fn next_after(
    r: &mut Reader<'_>,
    cur: &mut Vec<u8>,
    base: usize,
    ascending: bool,
) -> Result<usize, DecodeError> {
    let (shared, suffix) = read(r)?;
    let shared = base.saturating_add(shared);
    if shared > cur.len() {
        return Err(r.err("shared prefix"));
    }
    // Above the previous key: the first byte after the shared part grows,
    // or the previous key was just that part and this one is longer.
    let above = match (cur.get(shared), suffix.first()) {
        (Some(old), Some(new)) => new > old,
        (None, Some(_)) => true,
        _ => false,
    };
    if ascending && !above {
        return Err(r.err("key order"));
    }
    cur.truncate(shared);
    cur.extend_from_slice(suffix);
    Ok(shared)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_back_in_order_or_not() {
        let keys: [&[u8]; 6] = [b"", b"e10", b"e11", b"e1", &[b'x'; 40], b"e110"];
        let (mut out, mut prev) = (Vec::new(), Vec::new());
        for k in keys {
            push(&mut out, &mut prev, k);
        }
        assert_eq!(out.len(), 1 + 4 + 2 + 1 + (3 + 40) + 5, "{out:?}");
        let mut r = Reader::new(&out);
        let mut cur = Vec::new();
        for k in keys {
            next(&mut r, &mut cur, false).unwrap();
            assert_eq!(cur, k);
        }
        assert!(r.is_empty());
        // The same bytes read as a sorted block fail where a key goes down.
        let (mut r, mut cur) = (Reader::new(&out), Vec::new());
        assert!(
            next(&mut r, &mut cur, true).is_err(),
            "the empty key is not above nothing"
        );
        let mut r = Reader::new(&out[1..]);
        for _ in 0..2 {
            next(&mut r, &mut cur, true).unwrap();
        }
        assert!(next(&mut r, &mut cur, true).is_err(), "e1 after e11");
    }
}
