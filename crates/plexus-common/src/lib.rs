//! Plexus's shared vocabulary: property values and their types, the compact
//! record encoding, the order-preserving key encoding, and error kinds.
//!
//! Every other crate depends on this one and on nothing of Plexus below it.

mod codec;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod keys;
mod temporal;
mod value;

pub use codec::{
    decode_value, encode_value, read_varint, skip_value, write_bytes, write_varint, DecodeError,
    Reader,
};
pub use error::ErrorKind;
pub use keys::{
    encode_key_value, push_escaped, push_i64, push_u32, push_u64, read_escaped, read_i64, read_u32,
    read_u64, KEY_PART_END,
};
pub use temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time};
pub use value::{value_size, NodeValue, PathValue, RelValue, Value, ValueType};
