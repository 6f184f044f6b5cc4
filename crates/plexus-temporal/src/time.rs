//! Valid time: instants in microseconds since 1970 (negative before), and
//! half-open intervals `[from, to)` with an open end allowed.

use crate::error::{Result, TemporalError};

/// A half-open interval of valid time, in microseconds since 1970:
/// `[from, to)`, or `[from, ∞)` when `to` is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interval {
    pub from: i64,
    pub to: Option<i64>,
}

impl Interval {
    /// `[from, to)`; refused when empty.
    pub fn new(from: i64, to: Option<i64>) -> Result<Interval> {
        match to {
            Some(to) if to <= from => Err(TemporalError::EmptyInterval { from, to }),
            _ => Ok(Interval { from, to }),
        }
    }

    /// `[from, ∞)`.
    pub fn from(from: i64) -> Interval {
        Interval { from, to: None }
    }

    /// Whether `at` lies in the interval.
    pub fn contains(&self, at: i64) -> bool {
        at >= self.from && self.to.is_none_or(|to| at < to)
    }

    /// The end as a number, `i64::MAX` standing for an open end.
    pub(crate) fn end(&self) -> i64 {
        self.to.unwrap_or(i64::MAX)
    }

    pub(crate) fn with_end(from: i64, end: i64) -> Interval {
        Interval {
            from,
            to: (end != i64::MAX).then_some(end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_half_open_and_never_empty() {
        let i = Interval::new(5, Some(10)).unwrap();
        assert!(i.contains(5) && i.contains(9) && !i.contains(10) && !i.contains(4));
        assert!(Interval::from(5).contains(i64::MAX));
        assert!(Interval::new(5, Some(5)).is_err());
        assert_eq!(Interval::with_end(1, i64::MAX), Interval::from(1));
    }
}
