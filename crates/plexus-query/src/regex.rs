//! `s =~ pattern`: the whole string must match, as in Java's
//! `String.matches`, which openCypher follows. The `regex` crate matches in
//! linear time, so no pattern can make a query hang; compiled patterns are
//! kept per thread, since a query applies one pattern to many rows.

use crate::error::QueryError;
use regex::{Regex, RegexBuilder};
use std::cell::RefCell;
use std::collections::HashMap;

/// Compiled patterns kept per thread; when full the cache starts over.
const CACHE: usize = 64;
/// A pattern's compiled size is bounded, so a hostile one fails clearly.
const SIZE_LIMIT: usize = 1 << 20;

thread_local! {
    static COMPILED: RefCell<HashMap<String, Regex>> = RefCell::new(HashMap::new());
}

/// Whether all of `s` matches `pattern`.
pub(crate) fn matches(pattern: &str, s: &str) -> Result<bool, QueryError> {
    COMPILED.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(re) = cache.get(pattern) {
            return Ok(re.is_match(s));
        }
        let re = RegexBuilder::new(&format!("^(?:{pattern})$"))
            .size_limit(SIZE_LIMIT)
            .build()
            .map_err(|e| QueryError::Argument {
                code: "InvalidArgumentValue",
                message: format!("invalid regular expression '{pattern}': {e}"),
            })?;
        let hit = re.is_match(s);
        if cache.len() >= CACHE {
            cache.clear();
        }
        cache.insert(pattern.to_string(), re);
        Ok(hit)
    })
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn the_whole_string_must_match() {
        assert_eq!(matches("a", "a"), Ok(true));
        assert_eq!(matches("a", "ab"), Ok(false));
        assert_eq!(matches("a|ab", "ab"), Ok(true));
        assert_eq!(matches("(?i)AB.*", "abc"), Ok(true));
        assert_eq!(matches(".é", "xé"), Ok(true));
    }

    #[test]
    fn a_bad_pattern_is_an_argument_error() {
        let e = matches("(", "x").unwrap_err();
        assert_eq!(e.type_name(), "ArgumentError");
        assert!(e.to_string().contains("invalid regular expression"));
    }
}
