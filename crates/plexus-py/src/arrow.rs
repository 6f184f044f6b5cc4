//! Arrow across the language boundary through the PyCapsule interface
//! (`__arrow_c_stream__`): pyarrow, Polars, pandas (through pyarrow),
//! DuckDB and others read a Plexus result's buffers where they lie, and
//! Plexus reads theirs, without a Python object per value.

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::SchemaRef;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::CStr;
use std::sync::Mutex;

/// The capsule name the Arrow PyCapsule interface requires for streams.
const STREAM: &CStr = c"arrow_array_stream";

/// Record batches that Python takes once through `__arrow_c_stream__`
/// (`pyarrow.table(stream)`, `polars.DataFrame(stream)`).
#[pyclass(frozen, module = "plexus", name = "ArrowStream")]
pub struct ArrowStream {
    batches: Mutex<Option<(SchemaRef, Vec<RecordBatch>)>>,
    /// The address of each column's first data buffer in the first batch,
    /// so tests can see that consumers read these buffers in place.
    addresses: Vec<usize>,
}

impl ArrowStream {
    pub fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> ArrowStream {
        let addresses = batches
            .first()
            .map(|b| {
                b.columns()
                    .iter()
                    .map(|c| {
                        let data = c.to_data();
                        data.buffers().last().map_or(0, |buf| buf.as_ptr() as usize)
                    })
                    .collect()
            })
            .unwrap_or_default();
        ArrowStream {
            batches: Mutex::new(Some((schema, batches))),
            addresses,
        }
    }
}

#[pymethods]
impl ArrowStream {
    /// Hands the batches over as an Arrow C stream (once).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // Plexus infers the schema from the values; a consumer's request is
        // a hint the protocol allows producers to ignore.
        let _ = requested_schema;
        let taken = self
            .batches
            .lock()
            .map_err(|_| PyValueError::new_err("the stream's lock is poisoned"))?
            .take();
        let (schema, batches) =
            taken.ok_or_else(|| PyValueError::new_err("this Arrow stream was consumed already"))?;
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        // The consumer moves the stream out of the capsule (leaving a
        // released one); dropping the capsule drops whatever is left.
        PyCapsule::new_with_value(py, stream, STREAM)
    }

    /// The data buffer address of each column of the first batch.
    #[getter]
    fn _buffer_addresses(&self) -> Vec<usize> {
        self.addresses.clone()
    }
}

/// Reads every record batch of an object with `__arrow_c_stream__`
/// (a pyarrow Table or RecordBatchReader, a Polars DataFrame, …). The
/// batches share the producer's buffers.
pub fn read_stream(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<RecordBatch>> {
    if !obj.hasattr("__arrow_c_stream__")? {
        return Err(PyTypeError::new_err(format!(
            "{what}: a {} is not Arrow data (pass a pyarrow Table, RecordBatchReader, \
             a Polars or pandas DataFrame)",
            obj.get_type().name()?
        )));
    }
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let capsule = capsule
        .cast::<PyCapsule>()
        .map_err(|_| PyTypeError::new_err(format!("{what}: __arrow_c_stream__ gave no capsule")))?;
    let ptr = capsule.pointer_checked(Some(STREAM))?;
    // SAFETY: the capsule is named "arrow_array_stream", so by the
    // PyCapsule interface it holds an initialised ArrowArrayStream; from_raw
    // moves it out and leaves a released stream for the capsule to drop.
    let stream = unsafe { FFI_ArrowArrayStream::from_raw(ptr.as_ptr().cast()) };
    let reader = RecordBatchStreamReader::try_new(stream)
        .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))?;
    reader
        .map(|b| b.map_err(|e| PyValueError::new_err(format!("{what}: {e}"))))
        .collect()
}
