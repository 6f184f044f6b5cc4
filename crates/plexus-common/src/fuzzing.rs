//! Proptest strategies shared by the structured fuzzers of several crates
//! (feature `fuzzing`, for their tests only).

use proptest::prelude::*;

/// `seed`'s bytes with up to eight edits: a random byte inserted, a byte
/// removed, a byte replaced, or the bytes cut short.
pub fn byte_edits(seed: impl Strategy<Value = Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let edit = (any::<prop::sample::Index>(), 0u8..4, any::<u8>());
    (seed, proptest::collection::vec(edit, 0..8)).prop_map(|(mut b, edits)| {
        for (at, kind, byte) in edits {
            let i = at.index(b.len() + 1);
            match kind {
                0 => b.insert(i, byte),
                1 if i < b.len() => {
                    b.remove(i);
                }
                2 if i < b.len() => b[i] = byte,
                3 => b.truncate(i),
                _ => {}
            }
        }
        b
    })
}
