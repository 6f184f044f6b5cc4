//! Random and mutated bytes never panic the decoder or the message parser:
//! every input ends in a value or a clear error.

use plexus_server::message::parse;
use plexus_server::packstream::{decode, encode, Pack};
use proptest::prelude::*;

/// A valid RUN message to mutate.
fn run_message() -> Vec<u8> {
    encode(&Pack::Struct(
        0x10,
        vec![
            Pack::string("MATCH (n {id: $id}) RETURN n"),
            Pack::map([
                ("id", Pack::string("x")),
                (
                    "when",
                    Pack::Struct(b'I', vec![Pack::Int(1), Pack::Int(2), Pack::Int(3)]),
                ),
                (
                    "list",
                    Pack::List(vec![Pack::Float(1.5), Pack::Null, Pack::Bool(true)]),
                ),
            ]),
            Pack::map([("db", Pack::string("neo4j"))]),
        ],
    ))
}

/// Cases per property: `PROPTEST_CASES` for a longer run.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn random_bytes_decode_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = decode(&bytes);
        let _ = parse(&bytes);
    }

    #[test]
    fn mutated_messages_decode_or_fail_cleanly(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut m = run_message();
        for (at, b) in edits {
            let i = at.index(m.len());
            m[i] = b;
        }
        let _ = parse(&m);
        let end = cut.index(m.len() + 1);
        let _ = parse(&m[..end]);
    }
}

#[test]
fn the_unmutated_message_parses() {
    assert!(parse(&run_message()).is_ok());
}
