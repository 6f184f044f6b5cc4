//! `plexus._plexus`: the Python module's native half. The public API is
//! `python/plexus/__init__.py`, a thin layer over these classes that adds
//! what is easier said in Python (context managers, DataFrame conversions,
//! progress bars).

mod arrow;
mod convert;
mod database;
mod errors;
mod graph;
mod snapshot;
mod temporal;
mod types;

use pyo3::prelude::*;

/// Plexus's own allocations (Python keeps its allocator): mimalloc, as the
/// binaries use, because a bulk import allocates rows on a reading thread
/// and frees them on the loading one, which glibc's malloc serialises
/// (measured: the same Parquet import took 1.6× as long from Python
/// before this).
#[global_allocator]
static GLOBAL: plexus_alloc::Alloc = plexus_alloc::Alloc;

#[pymodule]
fn _plexus(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<database::Database>()?;
    m.add_class::<database::Cursor>()?;
    m.add_class::<database::Transaction>()?;
    m.add_class::<arrow::ArrowStream>()?;
    m.add_class::<snapshot::Snapshot>()?;
    m.add_class::<snapshot::NdArray>()?;
    m.add_class::<temporal::TemporalSnapshot>()?;
    m.add_class::<types::Node>()?;
    m.add_class::<types::Relationship>()?;
    m.add_class::<types::Path>()?;
    m.add_class::<types::Duration>()?;
    m.add_class::<types::Temporal>()?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
