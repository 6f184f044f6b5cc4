//! Test support for Plexus: a reference model of the graph storage, the
//! operations both are driven with, and helpers to compare them.
//!
//! The model is deliberately naive (maps and linear scans) so that it is
//! obviously right; the storage must agree with it on every answer.

pub mod bank;
pub mod crash;
pub mod faulty;
pub mod model;
pub mod powerloss;
pub mod tck;
