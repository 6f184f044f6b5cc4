//! What one query may spend: a cancellation handle, a deadline and a
//! memory budget, checked by every loop that runs once per row, match or
//! list element.
//!
//! The memory budget counts what the executor holds on purpose — rows
//! waiting for the next clause, aggregation groups, sort buffers, lists a
//! query builds — by an estimate of each value's heap size, not by the
//! allocator: an estimate is cheap, deterministic in tests, and catches
//! what actually grows with the data (the per-row overheads it misses are
//! bounded by the rows it counts).

use crate::error::QueryError;
use plexus_common::Value;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Limits for one query; `None` means unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueryLimits {
    /// Wall-clock time from the start of the run.
    pub timeout: Option<Duration>,
    /// Bytes the query may hold in rows, groups, sort buffers and lists.
    pub memory: Option<usize>,
}

/// Cancels a running query from another thread. Cheap to clone.
#[derive(Debug, Clone)]
pub struct CancelHandle(Option<Arc<AtomicBool>>);

impl Default for CancelHandle {
    fn default() -> CancelHandle {
        CancelHandle(Some(Arc::default()))
    }
}

impl CancelHandle {
    pub fn new() -> CancelHandle {
        CancelHandle::default()
    }

    /// A handle nothing holds another copy of, so nothing can cancel it:
    /// for a query run without one, which then allocates none (a shared
    /// flag was one of the few allocations of a one-seek query).
    pub fn none() -> CancelHandle {
        CancelHandle(None)
    }

    /// Asks the query to stop; it fails with [`QueryError::Cancelled`] at
    /// its next check.
    pub fn cancel(&self) {
        if let Some(flag) = &self.0 {
            flag.store(true, Ordering::Relaxed);
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

/// Which limit a query reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Timeout(Duration),
    Memory(usize),
}

/// How often (in checks) the clock is read: reading it costs about 20 ns,
/// a check about 1 ns.
const CLOCK_EVERY: u32 = 1024;

/// The running state of a query's limits; one per run, used on the thread
/// that runs the query.
#[derive(Debug)]
pub struct Guard {
    limits: QueryLimits,
    deadline: Option<Instant>,
    cancel: CancelHandle,
    ticks: Cell<u32>,
    held: Cell<usize>,
    /// The statement's wall clock: the time every `datetime()` and
    /// `timestamp()` of the query reads. Read at the first call, not when
    /// the guard is made: most queries never ask, and reading the clock
    /// was a tenth of a one-row query's cost.
    started: std::cell::OnceCell<std::time::SystemTime>,
}

impl Default for Guard {
    fn default() -> Self {
        Guard::new(QueryLimits::default(), CancelHandle::none())
    }
}

impl Guard {
    /// Starts the clock for a query with these limits.
    pub fn new(limits: QueryLimits, cancel: CancelHandle) -> Guard {
        Guard {
            limits,
            deadline: limits.timeout.and_then(|t| Instant::now().checked_add(t)),
            cancel,
            ticks: Cell::new(0),
            held: Cell::new(0),
            started: std::cell::OnceCell::new(),
        }
    }

    /// The statement's clock: the same instant for the whole query.
    pub fn started_at(&self) -> std::time::SystemTime {
        *self.started.get_or_init(std::time::SystemTime::now)
    }

    /// An unlimited guard, for callers that set no limits.
    pub fn unlimited() -> Guard {
        Guard::default()
    }

    /// Fails when the query was cancelled or ran out of time. Called once
    /// per row, match or element in every loop of the executor.
    #[inline]
    pub fn check(&self) -> Result<(), QueryError> {
        let t = self.ticks.get().wrapping_add(1);
        self.ticks.set(t);
        if t.is_multiple_of(CLOCK_EVERY) {
            self.check_now()?;
        }
        Ok(())
    }

    /// The full check: cancellation and the clock.
    pub fn check_now(&self) -> Result<(), QueryError> {
        if self.cancel.is_cancelled() {
            return Err(QueryError::Cancelled);
        }
        if let (Some(deadline), Some(t)) = (self.deadline, self.limits.timeout) {
            if Instant::now() >= deadline {
                return Err(QueryError::ResourceLimit(Limit::Timeout(t)));
            }
        }
        Ok(())
    }

    /// Takes `bytes` from the memory budget (and counts a check).
    pub fn charge(&self, bytes: usize) -> Result<(), QueryError> {
        self.check()?;
        let held = self.held.get().saturating_add(bytes);
        self.held.set(held);
        match self.limits.memory {
            Some(max) if held > max => Err(QueryError::ResourceLimit(Limit::Memory(max))),
            _ => Ok(()),
        }
    }

    /// Whether `bytes` more would fit, without taking them: for refusing an
    /// allocation before it is made.
    pub fn fits(&self, bytes: usize) -> Result<(), QueryError> {
        match self.limits.memory {
            Some(max) if self.held.get().saturating_add(bytes) > max => {
                Err(QueryError::ResourceLimit(Limit::Memory(max)))
            }
            _ => Ok(()),
        }
    }

    /// Gives `bytes` back to the budget.
    pub fn release(&self, bytes: usize) {
        self.held.set(self.held.get().saturating_sub(bytes));
    }

    /// Bytes held now.
    pub fn held(&self) -> usize {
        self.held.get()
    }
}

pub use plexus_common::value_size;

/// An estimate of the bytes a row of named values holds.
pub fn row_size<'a, K: AsRef<str> + 'a>(
    row: impl IntoIterator<Item = (&'a K, &'a Value)>,
) -> usize {
    row.into_iter()
        .map(|(k, v)| k.as_ref().len() + 48 + value_size(v))
        .sum()
}

/// `1.5 s`, `250 ms`: a limit as a person reads it.
pub(crate) fn show_duration(d: Duration) -> String {
    if d.as_secs() >= 1 {
        format!("{} s", d.as_secs_f64())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// `256 MiB`, `512 KiB`, `100 bytes`.
pub(crate) fn show_bytes(b: usize) -> String {
    const UNITS: [(&str, usize); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (name, size) in UNITS {
        if b >= size && b.is_multiple_of(size) {
            return format!("{} {name}", b / size);
        }
    }
    format!("{b} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_budget_refuses_past_the_limit() {
        let g = Guard::new(
            QueryLimits {
                timeout: None,
                memory: Some(100),
            },
            CancelHandle::new(),
        );
        assert!(g.charge(60).is_ok());
        assert!(g.fits(40).is_ok());
        assert!(g.fits(41).is_err());
        assert_eq!(
            g.charge(41),
            Err(QueryError::ResourceLimit(Limit::Memory(100)))
        );
        g.release(101);
        assert_eq!(g.held(), 0);
        assert!(g.charge(100).is_ok());
    }

    /// A handle made for the user cancels every clone of itself; the one a
    /// query without a handle gets cannot be cancelled (and holds no flag).
    #[test]
    fn only_a_shared_handle_cancels() {
        let c = CancelHandle::default();
        let copy = c.clone();
        c.cancel();
        assert!(copy.is_cancelled());
        let none = CancelHandle::none();
        none.cancel();
        assert!(!none.is_cancelled());
        assert!(Guard::unlimited().check_now().is_ok());
    }

    #[test]
    fn cancel_and_timeout_are_seen_by_the_next_full_check() {
        let c = CancelHandle::new();
        let g = Guard::new(QueryLimits::default(), c.clone());
        assert!(g.check_now().is_ok());
        c.cancel();
        assert_eq!(g.check_now(), Err(QueryError::Cancelled));
        let g = Guard::new(
            QueryLimits {
                timeout: Some(Duration::ZERO),
                memory: None,
            },
            CancelHandle::new(),
        );
        assert!(matches!(
            g.check_now(),
            Err(QueryError::ResourceLimit(Limit::Timeout(_)))
        ));
        // The cheap check reads the clock only every CLOCK_EVERY calls.
        let failed = (0..CLOCK_EVERY).map(|_| g.check()).any(|r| r.is_err());
        assert!(failed);
    }

    #[test]
    fn sizes_grow_with_content() {
        let small = value_size(&Value::Int(1));
        let list = value_size(&Value::List(vec![Value::Int(1); 10]));
        assert_eq!(list, small * 11);
        assert!(value_size(&Value::String("x".repeat(1000))) > 1000);
    }
}
